/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_envelope.c - the auto-approval envelope, clause by clause
 *
 * advisor_envelope_within() (docs/advisor.md#envelope) on the grants of a
 * real proof: each row merges a rule into a base policy, proves it with the
 * in-process prover (prover_job_answer, the body /v1/prove answers) and
 * asks the envelope. The rows cover every clause, and for the host and port
 * clauses every way a host is spelt - exact, upper case, a trailing dot, an
 * IP address, `*.` and `**.` wildcards, a port list - on the base side and
 * on the proposal's. What a wrong envelope would break: a new port on a
 * host the base reaches through a wildcard approved without a reviewer
 * (docs/advisor.md#envelope, no_new_port), or a clause that reads a
 * spelling the evaluator does not.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "model/model.h"
#include "prover/prover.h"

#define EP_REST                                                                                    \
    "\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\"," \
    "\"path\":\"/b\"}}]"

enum relax { R_NONE = 0, R_WILD = 1, R_PORTS = 2, R_ALL = 4 };

static const struct {
    const char *base;   /* the base's endpoints (YAML flow mappings, one per line) */
    const char *ep;     /* the proposed endpoint's members (JSON) */
    const char *bin;    /* the proposed binary */
    unsigned relax;     /* enum relax */
    const char *within; /* NULL: within; else a text the note holds */
} rows[] = {
    /* no_new_port, base spellings: the grant is a.wild.example:8443 */
    {"{host: a.wild.example, port: 443}", "\"host\":\"a.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, "(no_new_port): a new port on a host the policy reaches (port 8443"},
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"a.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, "(no_new_port)"},
    {"{host: \"**.wild.example\", port: 443}",
     "\"host\":\"a.b.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE,
     "(no_new_port)"},
    {"{host: \"*.WILD.Example.\", port: 443}", "\"host\":\"A.Wild.EXAMPLE\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, "(no_new_port)"},
    {"{host: A.WILD.EXAMPLE., port: 443}", "\"host\":\"a.wild.example.\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, "(no_new_port)"},
    {"{host: \"*-api.wild.example\", port: 443}",
     "\"host\":\"x-api.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE,
     "(no_new_port)"},
    {"{host: 93.184.216.34, port: 443}", "\"host\":\"93.184.216.34\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, "(no_new_port)"},
    /* ... a port list: each port counts */
    {"{host: \"*.wild.example\", ports: [443, 8443]}",
     "\"host\":\"a.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE, NULL},
    {"{host: \"*.wild.example\", ports: [443, 8443]}",
     "\"host\":\"a.wild.example\",\"ports\":[8443,9443]," EP_REST, "/usr/bin/curl", R_NONE,
     "(port 9443 on a.wild.example)"},
    {"{host: \"*.wild.example\", port: 443}\n      - {host: a.wild.example, port: 8443}",
     "\"host\":\"a.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE, NULL},
    /* ... hosts the base does not reach: no port of theirs is new */
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, NULL},
    {"{host: \"*.wild.example\", port: 443}",
     "\"host\":\"a.b.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE, NULL},
    {"{host: \"**.wild.example\", port: 443}", "\"host\":\"wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, NULL},
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"a.wild.example\",\"port\":443," EP_REST,
     "/usr/bin/curl", R_NONE, NULL},
    {"{host: 93.184.216.35, port: 443}", "\"host\":\"93.184.216.34\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_NONE, NULL},
    {"{allowed_ips: [93.184.216.0/24], port: 443}",
     "\"host\":\"a.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_NONE, NULL},
    /* ... a wildcard grant (host wildcards allowed): the names it shares */
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"*.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_WILD, "(no_new_port)"},
    {"{host: a.wild.example, port: 443}", "\"host\":\"**.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_WILD, "(port 8443 on a.wild.example)"},
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"*.other.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_WILD, NULL},
    {"{host: \"*.wild.example\", port: 443}\n      - {host: \"*.wild.example\", port: 8443}",
     "\"host\":\"x*.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_WILD, NULL},
    {"{host: \"*.wild.example\", port: 443}\n      - {host: xa.wild.example, port: 8443}",
     "\"host\":\"x*.wild.example\",\"port\":8443," EP_REST, "/usr/bin/curl", R_WILD,
     "(no_new_port)"},
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"a.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/curl", R_PORTS, NULL},
    /* exact_host, per spelling */
    {"{host: base.example, port: 443}", "\"host\":\"*.x.example\",\"port\":443," EP_REST,
     "/usr/bin/curl", R_NONE, "(exact_host): the host is a wildcard"},
    {"{host: base.example, port: 443}", "\"host\":\"**.x.example\",\"port\":443," EP_REST,
     "/usr/bin/curl", R_NONE, "(exact_host)"},
    {"{host: base.example, port: 443}", "\"host\":\"A.X.Example.\",\"port\":443," EP_REST,
     "/usr/bin/curl", R_NONE, NULL},
    /* exact_binary */
    {"{host: base.example, port: 443}", "\"host\":\"x.example\",\"port\":443," EP_REST,
     "/usr/bin/*", R_NONE, "(exact_binary)"},
    /* inspected_route */
    {"{host: base.example, port: 443}", "\"host\":\"x.example\",\"port\":443", "/usr/bin/curl",
     R_NONE, "(inspected_route): an opaque route"},
    {"{host: base.example, port: 443}",
     "\"host\":\"x.example\",\"port\":443,\"protocol\":\"rest\",\"rules\":[{\"allow\":{"
     "\"method\":\"GET\",\"path\":\"/b\"}}]",
     "/usr/bin/curl", R_NONE, "(inspected_route): an audit-mode route"},
    /* explicit_rules */
    {"{host: base.example, port: 443}",
     "\"host\":\"x.example\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"access\":\"read-only\"",
     "/usr/bin/curl", R_NONE, "(explicit_rules): access: read-only"},
    {"{host: base.example, port: 443}",
     "\"host\":\"x.example\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"*\",\"path\":\"/b\"}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules)"},
    /* no_endpoint_flags: not relaxed by anything */
    {"{host: base.example, port: 443}",
     "\"host\":\"x.example\",\"port\":443,\"allow_encoded_slash\":true," EP_REST, "/usr/bin/curl",
     R_ALL, "(no_endpoint_flags)"},
    /* every clause a rule fails is named, the first in full: a glob binary
     * on a wildcard host, opaque (the pastebin rule) */
    {"{host: a.example, port: 443}",
     "\"host\":\"**.pastebin.com\",\"port\":443,\"access\":\"full\"", "/usr/bin/**", R_NONE,
     "(exact_binary): the binary is a glob: /usr/bin/** -> **.pastebin.com:443 opaque; a reviewer "
     "must decide, or set envelope_allow_binary_globs. Also outside (exact_host): the host is a "
     "wildcard, or set envelope_allow_host_wildcards. Also outside (inspected_route): an opaque "
     "route is not inspected, or set envelope_allow_uninspected."},
    /* GraphQL and call rules in their own words */
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"graphql\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"operation_type\":\"*\"}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules): every GraphQL operation is allowed"},
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"json-rpc\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"*\"}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules): every call is allowed"},
    /* MCP: exact method and tool names are within; globs and a tools/call
     * without a tool wait for a reviewer */
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"path\":\"/mcp\",\"protocol\":\"mcp\","
     "\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"tools/call\",\"tool\":"
     "\"create_issue\"}},{\"allow\":{\"method\":\"initialize\"}},{\"allow\":{\"tool\":"
     "\"list_issues\"}},{\"allow\":{\"params\":{\"name\":{\"any\":[\"a\",\"b\"]}}}}]",
     "/usr/bin/curl", R_NONE, NULL},
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"mcp\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"tool\":\"search_*\"}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules): a tool glob allows tools nobody named"},
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"mcp\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"params\":{\"name\":{\"any\":[\"a\",\"b*\"]}}}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules): a tool glob allows tools nobody named"},
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"mcp\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"tools/*\"}}]",
     "/usr/bin/curl", R_NONE, "(explicit_rules): a method glob allows calls nobody named"},
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"mcp\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"tools/call\"}}]",
     "/usr/bin/curl", R_NONE,
     "(explicit_rules): a tools/call rule without a tool allows every tool"},
    /* relaxed by envelope_allow_access_presets, as access presets are */
    {"{host: a.example, port: 443}",
     "\"host\":\"api.example.com\",\"port\":443,\"protocol\":\"mcp\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"tool\":\"search_*\"}}]",
     "/usr/bin/curl", R_ALL, NULL},
    /* the envelope switched off */
    {"{host: \"*.wild.example\", port: 443}", "\"host\":\"a.wild.example\",\"port\":8443," EP_REST,
     "/usr/bin/**", R_ALL | 8u, NULL},
};

static struct model_policy *load(const char *yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("base", yaml, strlen(yaml), MODEL_FMT_YAML, d);

    for (size_t i = 0; p == NULL && i < model_diags_count(d); i++) {
        fprintf(stderr, "%s\n", model_diags_line(d, i));
    }
    model_diags_free(d);
    return p;
}

/* The prover's grants for 'base' -> 'cand' (a new reference). */
static json_t *grants_of(const char *base, const char *cand)
{
    struct prover_session *s = prover_session_new();
    json_t *body = json_pack("{s:s,s:s}", "baseline", base, "candidate", cand);
    char *text = json_dumps(body, 0);
    struct prover_answer a;
    json_t *g;

    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(text);
    prover_job_answer(s, PROVER_JOB_PROVE, text, strlen(text), NULL, &a);
    ck_assert_msg(a.status == 200, "prove: %u", a.status);
    g = json_incref(json_object_get(a.body, "grants"));
    prover_answer_free(&a);
    free(text);
    json_decref(body);
    prover_session_free(s);
    return g;
}

START_TEST(test_clause)
{
    char yaml[1024];
    char rule_text[1024];
    char note[1400];
    struct model_diags *d = model_diags_new();
    struct model_policy *base;
    struct model_policy *cand;
    struct advisor_envelope env = {.on = (rows[_i].relax & 8u) == 0,
                                   .binary_globs = (rows[_i].relax & R_ALL) != 0,
                                   .host_wildcards = (rows[_i].relax & (R_WILD | R_ALL)) != 0,
                                   .uninspected = (rows[_i].relax & R_ALL) != 0,
                                   .access_presets = (rows[_i].relax & R_ALL) != 0,
                                   .new_ports = (rows[_i].relax & (R_PORTS | R_ALL)) != 0};
    json_t *rule;
    json_t *grants;
    char *base_yaml;
    char *cand_yaml;
    bool in;

    snprintf(yaml, sizeof(yaml),
             "version: 1\nnetwork_policies:\n  base:\n    name: base\n    endpoints:\n"
             "      - %s\n    binaries:\n      - path: /usr/bin/curl\n",
             rows[_i].base);
    snprintf(rule_text, sizeof(rule_text),
             "{\"endpoints\":[{%s}],\"binaries\":[{\"path\":\"%s\"}]}", rows[_i].ep, rows[_i].bin);
    base = load(yaml);
    ck_assert_ptr_nonnull(base);
    rule = json_loads(rule_text, 0, NULL);
    ck_assert_ptr_nonnull(rule);
    cand = model_policy_merge_rule(base, "p", rule, d);
    ck_assert_msg(cand != NULL, "merge: %s",
                  model_diags_count(d) > 0 ? model_diags_line(d, 0) : "out of memory");
    base_yaml = model_policy_to_yaml(base, NULL);
    cand_yaml = model_policy_to_yaml(cand, NULL);
    grants = grants_of(base_yaml, cand_yaml);
    in = advisor_envelope_within(&env, base, rule, grants, note, sizeof(note));
    if (rows[_i].within == NULL) {
        ck_assert_msg(in, "row %d: outside: %s", _i, note);
    } else {
        ck_assert_msg(!in, "row %d: within, want %s", _i, rows[_i].within);
        ck_assert_msg(strstr(note, rows[_i].within) != NULL, "row %d: note '%s' lacks '%s'", _i,
                      note, rows[_i].within);
    }
    json_decref(grants);
    json_decref(rule);
    free(base_yaml);
    free(cand_yaml);
    model_policy_free(cand);
    model_policy_free(base);
    model_diags_free(d);
}
END_TEST

/* Fail closed: no grant list, a grant without breadth marks. */
START_TEST(test_no_grants)
{
    struct advisor_envelope env = {.on = true};
    struct model_policy *base = load("version: 1\nnetwork_policies: {}\n");
    json_t *rule = json_object();
    json_t *bare = json_pack("[{s:s,s:[i]}]", "host", "a.example", "ports", 443);
    char note[1400];

    ck_assert_ptr_nonnull(base);
    ck_assert(!advisor_envelope_within(&env, base, rule, NULL, note, sizeof(note)));
    ck_assert_ptr_nonnull(strstr(note, "lists no grants"));
    ck_assert(!advisor_envelope_within(&env, base, rule, bare, note, sizeof(note)));
    ck_assert_ptr_nonnull(strstr(note, "without breadth marks"));
    json_decref(bare);
    json_decref(rule);
    model_policy_free(base);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("advisor_envelope");
    TCase *tc = tcase_create("envelope");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_clause, 0, (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_test(tc, test_no_grants);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    prover_finalize();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
