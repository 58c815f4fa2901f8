/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_merge.c - proposals, the AddRule merge and deep copies
 *
 * Proposal rows check the policy.local validation messages (reference
 * wording) and their file:line:col. Merge rows give a base policy, a
 * proposal and the expected merged policy, all compared through the
 * canonical YAML emitter, so every field of the result is checked: target
 * selection (by name, endpoint-overlap fallback, `_provider_` exclusion),
 * the authorization-inheritance checks that keep a rule separate, port and
 * list unions, fill-only-when-empty fields, preset expansion, binaries and
 * advisor_proposed marking. Error rows expect a diagnostic substring.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* ===========================================================================
 * Helpers
 * ========================================================================= */

static struct model_policy *load_policy(const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("base.yaml", text, strlen(text), MODEL_FMT_AUTO, d);

    ck_assert_msg(p != NULL, "policy did not load: %s\n%s",
                  model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?", text);
    model_diags_free(d);
    return p;
}

static char *yaml_of(const struct model_policy *p)
{
    size_t len = 0;
    char *y = model_policy_to_yaml(p, &len);
    ck_assert_ptr_nonnull(y);
    return y;
}

static struct model_proposal *load_proposal(const char *json)
{
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr = model_proposal_load("p.json", json, strlen(json), d);

    ck_assert_msg(pr != NULL, "proposal did not load: %s\n%s",
                  model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?", json);
    model_diags_free(d);
    return pr;
}

/* True when some diagnostic line contains 'want'. */
static bool diags_have(struct model_diags *d, const char *want)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_line(d, i), want) != NULL) {
            return true;
        }
    }
    return false;
}

static void dump_diags(struct model_diags *d)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        fprintf(stderr, "  diag: %s\n", model_diags_line(d, i));
    }
}

/* ===========================================================================
 * Proposal validation
 * ========================================================================= */

#define EP_OK "{\"host\":\"api.example.com\",\"port\":443}"
#define BIN_CURL "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]"

struct prop_case {
    const char *name;
    const char *json;
    const char *want; /* NULL: loads; else a substring of some diagnostic line */
};

static const struct prop_case prop_cases[] = {
    {"minimal",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[" EP_OK
     "]," BIN_CURL "}}}]}",
     NULL},
    {"no_operations_key", "{\"intent_summary\":\"x\"}",
     "p.json:1:1: proposal requires at least one operation"},
    {"empty_operations", "{\"operations\":[]}", "proposal requires at least one operation"},
    {"null_operations", "{\"operations\":null}", "proposal requires at least one operation"},
    {"operations_not_list", "{\"operations\":{}}", "operations must be a list"},
    {"not_object", "[1]", "proposal must be a JSON object"},
    {"bad_json", "{\"operations\":[}", "p.json:1:"},
    {"remove_rule_op", "{\"operations\":[{\"removeRule\":{\"ruleName\":\"r\"}}]}",
     "this MVP accepts `addRule` operations; submit a full narrow NetworkPolicyRule"},
    {"addrule_plus_other", "{\"operations\":[{\"addRule\":{},\"removeRule\":{}}]}",
     "this MVP accepts `addRule` operations"},
    {"op_not_object", "{\"operations\":[\"addRule\"]}", "this MVP accepts `addRule` operations"},
    {"no_endpoints",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[]," BIN_CURL
     "}}}]}",
     "rule.endpoints must contain at least one endpoint"},
    {"missing_endpoints",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{" BIN_CURL "}}}]}",
     "rule.endpoints must contain at least one endpoint"},
    {"missing_host",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":"
     "[{\"port\":443}]," BIN_CURL "}}}]}",
     "endpoint.host is required"},
    {"empty_host",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":"
     "[{\"host\":\"\",\"port\":443}]," BIN_CURL "}}}]}",
     "endpoint.host is required"},
    {"missing_port",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":"
     "[{\"host\":\"a.example.com\"}]," BIN_CURL "}}}]}",
     "endpoint.port or endpoint.ports is required"},
    {"port_zero",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":"
     "[{\"host\":\"a.example.com\",\"port\":0}]," BIN_CURL "}}}]}",
     "endpoint.port or endpoint.ports is required"},
    {"query_in_allow_path",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"protocol\":\"rest\",\"rules\":[{\"allow\":{\"method\":"
     "\"GET\",\"path\":\"/x?y=1\"}}]}]," BIN_CURL "}}}]}",
     "L7 allow paths must not include query strings"},
    {"no_name",
     "{\"operations\":[{\"addRule\":{\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "addRule.ruleName or rule.name is required"},
    {"blank_names",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"  \",\"rule\":{\"name\":\" \","
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "addRule.ruleName or rule.name is required"},
    {"name_from_rule",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\" \",\"rule\":{\"name\":"
     "\"n\",\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     NULL},
    {"provider_prefix",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"_provider_github\","
     "\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "chunk '_provider_github' uses reserved '_provider_' rule-name prefix"},
    {"provider_prefix_from_rule_name",
     "{\"operations\":[{\"addRule\":{\"rule\":{\"name\":\"_provider_x\",\"endpoints\":[" EP_OK
     "]," BIN_CURL "}}}]}",
     "uses reserved '_provider_' rule-name prefix"},
    {"control_in_name",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\\u0001b\",\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "rule name must not contain control characters"},
    {"unknown_top_key",
     "{\"rationale\":\"r\",\"operations\":[{\"addRule\":{\"ruleName\":\"r\","
     "\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "p.json:1:2: unknown field 'rationale' in proposal"},
    {"unknown_addrule_key",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"why\":1,"
     "\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "unknown field 'why' in addRule"},
    {"rule_not_object", "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":[]}}]}",
     "addRule.rule must be a NetworkPolicyRule object"},
    {"intent_not_string",
     "{\"intent_summary\":5,\"operations\":[{\"addRule\":{\"ruleName\":"
     "\"r\",\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "intent_summary must be a string"},
    {"rulename_not_string",
     "{\"operations\":[{\"addRule\":{\"ruleName\":7,\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "addRule.ruleName must be a string"},
    {"refused_uninspected",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"allow_uninspected_credentials\":true}]," BIN_CURL "}}}]}",
     "endpoint.allow_uninspected_credentials is not accepted in proposals"},
    {"refused_advisor_flag",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"advisor_proposed\":false}]," BIN_CURL "}}}]}",
     "endpoint.advisor_proposed is not accepted in proposals"},
    {"refused_resolved_ips",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{"
     "\"target_sandbox\":\"db\",\"port\":443,\"resolved_ips\":[\"10.0.0.1\"]}]," BIN_CURL "}}}]}",
     "endpoint.resolved_ips is not accepted in proposals"},
    {"refused_mcp_contract",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"protocol\":\"mcp\",\"mcp\":{\"strict_tool_names\":"
     "true}}]," BIN_CURL "}}}]}",
     "p.json:1:116: endpoint.mcp is not accepted in proposals"},
    {"schema_unknown_endpoint_key",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"hots\":1}]," BIN_CURL "}}}]}",
     "hots"},
    {"validator_tld_wildcard",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"*.com\",\"port\":443}]," BIN_CURL "}}}]}",
     "p.json:1:"},
    {"validator_bad_method",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"G T\",\"path\":\"/x\"}}]}]," BIN_CURL "}}}]}",
     "invalid method"},
    /* Unicode format characters (General Category Cf) and malformed UTF-8
     * anywhere a reviewer reads (issue #22): refused with the field's path
     * and the code point. */
    {"rlo_in_rule_name",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"gh\xe2\x80\xae\",\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "p.json:1:39: operations[0].addRule.ruleName contains U+202E (a Unicode format character)"},
    {"zwsp_in_rule_name",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"g\\u200bh\",\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "operations[0].addRule.ruleName contains U+200B (a Unicode format character)"},
    {"rlo_in_intent",
     "{\"intent_summary\":\"read \\u202egro.elpmaxe\",\"operations\":[{\"addRule\":{"
     "\"ruleName\":\"r\",\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "intent_summary contains U+202E (a Unicode format character)"},
    {"zwsp_in_host",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a\\u200b.example.com\",\"port\":443}]," BIN_CURL "}}}]}",
     "operations[0].addRule.rule.endpoints[0].host contains U+200B (a Unicode format "
     "character)"},
    {"rlo_in_path",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/x\\u202e/y\"}}]}]," BIN_CURL "}}}]}",
     "operations[0].addRule.rule.endpoints[0].rules[0].allow.path contains U+202E"},
    {"zwsp_in_path",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"a.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/x\\u200b\"}}]}]," BIN_CURL "}}}]}",
     "rules[0].allow.path contains U+200B"},
    {"bom_in_binary",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[" EP_OK
     "],\"binaries\":[{\"path\":\"/usr/bin/\\ufeffcurl\"}]}}}]}",
     "operations[0].addRule.rule.binaries[0].path contains U+FEFF"},
    {"lri_in_key",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[" EP_OK
     "]," BIN_CURL ",\"\\u2066x\":1}}}]}",
     "operations[0].addRule.rule contains U+2066"},
    {"tag_in_rule_name",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\\udb40\\udc01\",\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "ruleName contains U+E0001"},
    {"bad_utf8_in_rule_name",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"r\xc0\xaf\",\"rule\":{"
     "\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     "p.json:1:"},
    {"non_format_unicode_loads",
     "{\"intent_summary\":\"caf\xc3\xa9 \\u00a0\\u05d0\",\"operations\":[{\"addRule\":{"
     "\"ruleName\":\"caf\\u00e9\",\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}]}",
     NULL},
};

START_TEST(test_proposal_validation)
{
    const struct prop_case *c = &prop_cases[_i];
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr = model_proposal_load("p.json", c->json, strlen(c->json), d);

    if (c->want == NULL) {
        if (pr == NULL) {
            dump_diags(d);
        }
        ck_assert_msg(pr != NULL, "%s: expected to load", c->name);
        ck_assert_uint_eq(model_diags_count(d), 0);
        ck_assert_uint_eq(model_proposal_nops(pr), 1);
    } else {
        if (!diags_have(d, c->want)) {
            dump_diags(d);
        }
        ck_assert_msg(pr == NULL, "%s: expected an error", c->name);
        ck_assert_msg(diags_have(d, c->want), "%s: want '%s'", c->name, c->want);
    }
    model_proposal_free(pr);
    model_diags_free(d);
}
END_TEST

/* Locations point into the proposal, line and column. */
START_TEST(test_proposal_locations)
{
    static const char json[] =
        "{\n"
        "  \"operations\": [\n"
        "    {\"addRule\": {\"ruleName\": \"r\", \"rule\": {\n"
        "      \"endpoints\": [{\"host\": \"a.example.com\", \"port\": 443,\n"
        "                     \"protocol\": \"rest\", \"rules\": [\n"
        "        {\"allow\": {\"method\": \"GET\", \"path\": \"/a?b\"}}]}],\n"
        "      \"binaries\": [{\"path\": \"/usr/bin/curl\"}]}}},\n"
        "    {\"removeRule\": {}}\n"
        "  ]\n"
        "}\n";
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr = model_proposal_load("p.json", json, strlen(json), d);

    ck_assert_ptr_null(pr);
    if (model_diags_count(d) != 2) {
        dump_diags(d);
    }
    /* Both operations are reported, each at its own place. */
    ck_assert_uint_eq(model_diags_count(d), 2);
    ck_assert_str_eq(model_diags_line(d, 0),
                     "p.json:6:45: L7 allow paths must not include query strings");
    ck_assert_str_eq(model_diags_line(d, 1),
                     "p.json:8:5: this MVP accepts `addRule` operations; submit a full narrow "
                     "NetworkPolicyRule");
    model_diags_free(d);
}
END_TEST

START_TEST(test_proposal_operation_cap)
{
    static const char op[] =
        "{\"addRule\":{\"ruleName\":\"r\",\"rule\":{\"endpoints\":[" EP_OK "]," BIN_CURL "}}}";
    size_t n = 257;
    size_t cap = 64 + n * (sizeof(op) + 1);
    char *json = malloc(cap);
    size_t o = 0;
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr;

    ck_assert_ptr_nonnull(json);
    for (int round = 0; round < 2; round++) {
        size_t count = round == 0 ? 256 : 257;
        o = (size_t)snprintf(json, cap, "{\"operations\":[");
        for (size_t i = 0; i < count; i++) {
            o += (size_t)snprintf(json + o, cap - o, "%s%s", i ? "," : "", op);
        }
        o += (size_t)snprintf(json + o, cap - o, "]}");
        pr = model_proposal_load("p.json", json, o, d);
        if (round == 0) {
            ck_assert_ptr_nonnull(pr);
            ck_assert_uint_eq(model_proposal_nops(pr), 256);
        } else {
            ck_assert_ptr_null(pr);
            ck_assert(diags_have(d, "proposal has 257 operations; at most 256 are accepted"));
        }
        model_proposal_free(pr);
    }
    free(json);
    model_diags_free(d);
}
END_TEST

/* Name resolution and the forced values of a loaded proposal. */
START_TEST(test_proposal_accessors)
{
    static const char json[] =
        "{\"intent_summary\":\"Allow gh to update docs.\",\"operations\":["
        "{\"addRule\":{\"ruleName\":\"  docs_write \",\"rule\":{\"endpoints\":[{\"host\":"
        "\"API.GitHub.com.\",\"ports\":[8443,443,443]}],\"binaries\":[{\"path\":\"/usr/bin/gh\"},"
        "{\"path\":\"/usr/bin/gh\"}]}}},"
        "{\"addRule\":{\"rule\":{\"name\":\"from_rule\",\"endpoints\":[" EP_OK "]," BIN_CURL
        "}}}]}";
    struct model_proposal *pr = load_proposal(json);
    const struct model_rule *r;

    ck_assert_str_eq(model_proposal_intent(pr), "Allow gh to update docs.");
    ck_assert_uint_eq(model_proposal_nops(pr), 2);
    ck_assert_str_eq(model_proposal_rule_name(pr, 0), "docs_write");
    ck_assert_str_eq(model_proposal_rule_name(pr, 1), "from_rule");
    ck_assert_ptr_null(model_proposal_rule_name(pr, 2));
    ck_assert_ptr_null(model_proposal_rule(pr, 2));
    r = model_proposal_rule(pr, 0);
    ck_assert_str_eq(model_rule_key(r), "docs_write");
    /* An empty rule.name is filled from the resolved name. */
    ck_assert_str_eq(model_rule_display_name(r), "docs_write");
    /* Validated: host normalised, ports folded; binaries de-duplicated. */
    ck_assert_str_eq(r->endpoints[0].host.s, "api.github.com");
    ck_assert_uint_eq(r->endpoints[0].nports, 2);
    ck_assert_uint_eq(r->endpoints[0].ports[0], 443);
    ck_assert_uint_eq(r->endpoints[0].ports[1], 8443);
    ck_assert_uint_eq(model_rule_nbinaries(r), 1);
    ck_assert_str_eq(model_rule_display_name(model_proposal_rule(pr, 1)), "from_rule");
    ck_assert_ptr_null(model_proposal_intent(NULL));
    ck_assert_uint_eq(model_proposal_nops(NULL), 0);
    model_proposal_free(pr);
    model_proposal_free(NULL);
}
END_TEST

/* ===========================================================================
 * Merge
 * ========================================================================= */

#define GH_RO                                                                           \
    "version: 1\n"                                                                      \
    "network_policies:\n"                                                               \
    "  github_api_readonly:\n"                                                          \
    "    name: github-api-readonly\n"                                                   \
    "    endpoints:\n"                                                                  \
    "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce,\n" \
    "         access: read-only}\n"                                                     \
    "    binaries: [{path: /usr/bin/curl}]\n"

#define PUT_OP(name, bins)                                                               \
    "{\"addRule\":{\"ruleName\":\"" name "\",\"rule\":{\"endpoints\":[{\"host\":"        \
    "\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\"," \
    "\"rules\":[{\"allow\":{\"method\":\"PUT\",\"path\":\"/repos/o/r/contents/x\"}}]}]," \
    "\"binaries\":[" bins "]}}}"

#define CURL "{\"path\":\"/usr/bin/curl\"}"
#define GH "{\"path\":\"/usr/bin/gh\"}"
#define WGET "{\"path\":\"/usr/bin/wget\"}"

struct merge_case {
    const char *name;
    const char *base;
    const char *proposal;
    bool mark_advisor;
    const char *expect; /* expected merged policy (any spelling); NULL with 'error' */
    const char *error;  /* substring of a diagnostic line */
};

static const struct merge_case merge_cases[] = {
    /* Compat 901: the PUT folds into the overlapping read-only rule; the
     * preset becomes explicit GET/HEAD/OPTIONS `**` rules first. The
     * existing endpoint keeps advisor_proposed false. */
    {"fold_expands_read_only_preset", GH_RO, "{\"operations\":[" PUT_OP("put_file", CURL) "]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  github_api_readonly:\n"
     "    name: github-api-readonly\n"
     "    endpoints:\n"
     "      - host: api.github.com\n"
     "        port: 443\n"
     "        protocol: rest\n"
     "        enforcement: enforce\n"
     "        rules:\n"
     "          - allow: {method: GET, path: '**'}\n"
     "          - allow: {method: HEAD, path: '**'}\n"
     "          - allow: {method: OPTIONS, path: '**'}\n"
     "          - allow: {method: PUT, path: /repos/o/r/contents/x}\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* A second binary in the existing rule would inherit the PUT: the rule
     * is kept separate under its requested name and marked. */
    {"kept_separate_existing_binary",
     "version: 1\n"
     "network_policies:\n"
     "  ro:\n"
     "    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce,"
     " access: read-only}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/wget}]\n",
     "{\"operations\":[" PUT_OP("put_file", CURL) "]}", true,
     "version: 1\n"
     "network_policies:\n"
     "  ro:\n"
     "    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce,"
     " access: read-only}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/wget}]\n"
     "  put_file:\n"
     "    name: put_file\n"
     "    endpoints:\n"
     "      - host: api.github.com\n"
     "        port: 443\n"
     "        protocol: rest\n"
     "        enforcement: enforce\n"
     "        advisor_proposed: true\n"
     "        rules: [{allow: {method: PUT, path: /repos/o/r/contents/x}}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* Addressed by name, the same conflict is an error. */
    {"named_conflict_is_error",
     "version: 1\n"
     "network_policies:\n"
     "  ro:\n"
     "    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce,"
     " access: read-only}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/wget}]\n",
     "{\"operations\":[" PUT_OP("ro", CURL) "]}", true, NULL,
     "p.json:1:27: rule 'ro': existing binary '/usr/bin/wget' would inherit the new "
     "authorization"},
    /* Listing every existing binary makes the named fold legal. */
    {"named_fold_all_binaries_listed",
     "version: 1\n"
     "network_policies:\n"
     "  ro:\n"
     "    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce,"
     " rules: [{allow: {method: GET, path: /a}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/wget}]\n",
     "{\"operations\":[" PUT_OP("ro", WGET "," CURL) "]}", false,
     "version: 1\n"
     "network_policies:\n"
     "  ro:\n"
     "    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce,"
     " rules: [{allow: {method: GET, path: /a}},"
     " {allow: {method: PUT, path: /repos/o/r/contents/x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/wget}]\n",
     NULL},
    /* Changing an endpoint that also serves 8443 needs 8443 named:
     * UndeclaredPortWouldChange keeps the rule separate. */
    {"kept_separate_undeclared_port",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443], protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"b\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"POST\",\"path\":\"/x\"}}]}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443], protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  b:\n"
     "    name: b\n"
     "    endpoints: [{host: api.example.com, port: 443, protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: POST, path: /x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    {"named_undeclared_port_is_error",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443], protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"POST\",\"path\":\"/x\"}}]}],\"binaries\":[" CURL "]}}}]}",
     false, NULL,
     "rule 'a': the change to endpoint api.example.com would also apply to undeclared port 8443"},
    /* Naming both ports folds; ports and rules merge. */
    {"fold_with_all_ports_named",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443], protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"b\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"ports\":[8443,443,9443],\"protocol\":\"rest\",\"enforcement\":"
     "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"POST\",\"path\":\"/"
     "x\"}}]}],\"binaries\":[" CURL "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443, 9443], protocol: rest,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}},"
     " {allow: {method: POST, path: /x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* A new binary would inherit the rule's other endpoint: kept separate. */
    {"kept_separate_new_binary",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}, {host: other.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"b\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"port\":443}],\"binaries\":[" GH "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}, {host: other.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  b:\n"
     "    name: b\n"
     "    endpoints: [{host: api.example.com, port: 443, advisor_proposed: true}]\n"
     "    binaries: [{path: /usr/bin/gh}]\n",
     NULL},
    {"named_new_binary_is_error",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}, {host: other.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"port\":443}],\"binaries\":[" GH "]}}}]}",
     true, NULL,
     "rule 'a': new binary '/usr/bin/gh' would inherit undeclared endpoint other.example.com:443"},
    /* A new binary that declares everything it inherits just joins. */
    {"fold_new_binary_declared",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443, protocol: rest, enforcement: enforce,"
     " access: read-only}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"b\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"API.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"access\":\"read-only\"}],\"binaries\":[" GH "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443, protocol: rest, enforcement: enforce,"
     " access: read-only}]\n"
     "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/gh}]\n",
     NULL},
    /* Fallback skips `_provider_*` rules even though they sort first. */
    {"provider_rules_never_absorb",
     "version: 1\n"
     "network_policies:\n"
     "  _provider_github:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"mine\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.github.com\",\"port\":443}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  _provider_github:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  mine:\n"
     "    name: mine\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* Among user rules, the sorted-first overlapping key absorbs. */
    {"fallback_sorted_first",
     "version: 1\n"
     "network_policies:\n"
     "  zz:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  _provider_x:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  mm:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"new\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.github.com\",\"ports\":[443,444]}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  zz:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  _provider_x:\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  mm:\n"
     "    endpoints: [{host: api.github.com, ports: [443, 444]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* Overlap needs the same path scope and a shared port. */
    {"no_overlap_other_path_or_port",
     "version: 1\n"
     "network_policies:\n"
     "  g:\n"
     "    endpoints: [{host: api.github.com, port: 443, path: /graphql, protocol: rest,"
     " enforcement: enforce, access: read-only}, {host: api.github.com, port: 80}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"n\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.github.com\",\"port\":443}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  g:\n"
     "    endpoints: [{host: api.github.com, port: 443, path: /graphql, protocol: rest,"
     " enforcement: enforce, access: read-only}, {host: api.github.com, port: 80}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  n:\n"
     "    name: n\n"
     "    endpoints: [{host: api.github.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* deny_rules and allowed_ips union, booleans OR; the existing
     * enforcement and protocol are kept. */
    {"unions_and_booleans",
     "version: 1\n"
     "network_policies:\n"
     "  svc:\n"
     "    endpoints:\n"
     "      - host: svc.example.com\n"
     "        port: 8080\n"
     "        protocol: rest\n"
     "        enforcement: audit\n"
     "        allowed_ips: [10.0.0.0/8]\n"
     "        rules: [{allow: {method: GET, path: '/**'}}]\n"
     "        deny_rules: [{method: POST, path: /admin/**}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"svc\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"svc.example.com\",\"port\":8080,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"allowed_ips\":[\"10.0.0.0/8\",\"192.168.1.0/24\"],\"allow_encoded_slash\":true,"
     "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}}],"
     "\"deny_rules\":[{\"method\":\"POST\",\"path\":\"/admin/**\"},"
     "{\"method\":\"DELETE\",\"path\":\"/**\"}]}],\"binaries\":[" CURL "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  svc:\n"
     "    endpoints:\n"
     "      - host: svc.example.com\n"
     "        port: 8080\n"
     "        protocol: rest\n"
     "        enforcement: audit\n"
     "        allow_encoded_slash: true\n"
     "        allowed_ips: [10.0.0.0/8, 192.168.1.0/24]\n"
     "        rules: [{allow: {method: GET, path: '/**'}}]\n"
     "        deny_rules: [{method: POST, path: /admin/**}, {method: DELETE, path: '/**'}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* An L4 endpoint takes protocol, enforcement and tls from the proposal. */
    {"fill_empty_fields",
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"h\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"h.example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"tls\":\"terminate\",\"rules\":[{\"allow\":{\"method\":\"get\",\"path\":\"/x\"}}]}],"
     "\"binaries\":[" CURL "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443, protocol: rest, tls: terminate,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: /x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* A bare endpoint adopts an incoming access preset... */
    {"access_adopted_by_bare_endpoint",
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"h\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"h.example.com\",\"port\":443,\"protocol\":\"rest\",\"access\":\"full\"}],"
     "\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443, protocol: rest, access: full}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* ...but not one that already has rules (or access). */
    {"access_ignored_when_rules_exist",
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443, protocol: rest, enforcement: enforce,"
     " rules: [{allow: {method: GET, path: /a}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"h\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"h.example.com\",\"port\":443,\"protocol\":\"rest\",\"access\":\"full\"}],"
     "\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  h:\n"
     "    endpoints: [{host: h.example.com, port: 443, protocol: rest, enforcement: enforce,"
     " rules: [{allow: {method: GET, path: /a}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* WebSocket read-write expands to GET and WEBSOCKET_TEXT. */
    {"websocket_read_write_expansion",
     "version: 1\n"
     "network_policies:\n"
     "  ws:\n"
     "    endpoints: [{host: ws.example.com, port: 443, protocol: websocket,"
     " enforcement: enforce, access: read-write}]\n"
     "    binaries: [{path: /usr/bin/node}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"ws\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"ws.example.com\",\"port\":443,\"protocol\":\"websocket\",\"rules\":[{\"allow\":"
     "{\"method\":\"GET\",\"path\":\"/chat\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/node\"}]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  ws:\n"
     "    endpoints: [{host: ws.example.com, port: 443, protocol: websocket,"
     " enforcement: enforce, rules: [{allow: {method: GET, path: '**'}},"
     " {allow: {method: WEBSOCKET_TEXT, path: '**'}}, {allow: {method: GET, path: /chat}}]}]\n"
     "    binaries: [{path: /usr/bin/node}]\n",
     NULL},
    /* REST full and read-write expansions. */
    {"rest_full_and_read_write_expansion",
     "version: 1\n"
     "network_policies:\n"
     "  f:\n"
     "    endpoints: [{host: f.example.com, port: 443, protocol: rest, access: full}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  w:\n"
     "    endpoints: [{host: w.example.com, port: 443, protocol: rest, access: read-write}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":["
     "{\"addRule\":{\"ruleName\":\"f\",\"rule\":{\"endpoints\":[{\"host\":\"f.example.com\","
     "\"port\":443,\"rules\":[{\"allow\":{\"method\":\"DELETE\",\"path\":\"/x\"}}]}],"
     "\"binaries\":[" CURL "]}}},"
     "{\"addRule\":{\"ruleName\":\"w\",\"rule\":{\"endpoints\":[{\"host\":\"w.example.com\","
     "\"port\":443,\"protocol\":\"rest\",\"rules\":[{\"allow\":{\"method\":\"DELETE\","
     "\"path\":\"/x\"}}]}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  f:\n"
     "    endpoints: [{host: f.example.com, port: 443, protocol: rest,"
     " rules: [{allow: {method: '*', path: '**'}}, {allow: {method: DELETE, path: /x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  w:\n"
     "    endpoints: [{host: w.example.com, port: 443, protocol: rest,"
     " rules: [{allow: {method: GET, path: '**'}}, {allow: {method: HEAD, path: '**'}},"
     " {allow: {method: OPTIONS, path: '**'}}, {allow: {method: POST, path: '**'}},"
     " {allow: {method: PUT, path: '**'}}, {allow: {method: PATCH, path: '**'}},"
     " {allow: {method: DELETE, path: /x}}]}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* An empty incoming binaries list never clears the existing list. */
    {"empty_binaries_do_not_clear",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"port\":443}],\"binaries\":[]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* ...and an empty list that would change the rule conflicts. */
    {"empty_binaries_kept_separate",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"b\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"ports\":[443,8443]}]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n"
     "  b:\n"
     "    name: b\n"
     "    endpoints: [{host: api.example.com, ports: [443, 8443]}]\n",
     NULL},
    /* Marking: an endpoint the proposal appends is advisor_proposed; the
     * one it merges into keeps its flag. */
    {"advisor_marks_only_new_endpoints",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"api.example.com\",\"ports\":[443,444]},{\"host\":\"new.example.com\",\"port\":443}],"
     "\"binaries\":[" CURL "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, ports: [443, 444]},"
     " {host: new.example.com, port: 443, advisor_proposed: true}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    {"no_marks_without_mark_advisor",
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"a\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"new.example.com\",\"port\":443}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "network_policies:\n"
     "  a:\n"
     "    endpoints: [{host: api.example.com, port: 443}, {host: new.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* Operations apply in order: the second folds into the first's rule. */
    {"operations_in_order", "version: 1\n",
     "{\"operations\":["
     "{\"addRule\":{\"ruleName\":\"x\",\"rule\":{\"endpoints\":[{\"host\":\"x.example.com\","
     "\"port\":443}],\"binaries\":[" CURL "]}}},"
     "{\"addRule\":{\"ruleName\":\"x\",\"rule\":{\"endpoints\":[{\"host\":\"y.example.com\","
     "\"port\":80}],\"binaries\":[" CURL "]}}}]}",
     true,
     "version: 1\n"
     "network_policies:\n"
     "  x:\n"
     "    name: x\n"
     "    endpoints: [{host: x.example.com, port: 443, advisor_proposed: true},"
     " {host: y.example.com, port: 80, advisor_proposed: true}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* Filesystem, process and landlock pass through untouched. */
    {"static_sections_preserved",
     "version: 1\n"
     "filesystem_policy: {include_workdir: true, read_only: [/usr], read_write: [/tmp]}\n"
     "landlock: {compatibility: best_effort}\n"
     "process: {run_as_user: sandbox, run_as_group: sandbox}\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"x\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"x.example.com\",\"port\":443}],\"binaries\":[" CURL "]}}}]}",
     false,
     "version: 1\n"
     "filesystem_policy: {include_workdir: true, read_only: [/usr], read_write: [/tmp]}\n"
     "landlock: {compatibility: best_effort}\n"
     "process: {run_as_user: sandbox, run_as_group: sandbox}\n"
     "network_policies:\n"
     "  x:\n"
     "    name: x\n"
     "    endpoints: [{host: x.example.com, port: 443}]\n"
     "    binaries: [{path: /usr/bin/curl}]\n",
     NULL},
    /* A merge whose result does not validate fails as a whole. */
    {"invalid_result_rejected",
     "version: 1\n"
     "network_policies:\n"
     "  t:\n"
     "    endpoints: [{host: t.example.com, port: 5432, protocol: tcp}]\n"
     "    binaries: [{path: /usr/bin/psql}]\n",
     "{\"operations\":[{\"addRule\":{\"ruleName\":\"t\",\"rule\":{\"endpoints\":[{\"host\":"
     "\"t.example.com\",\"port\":5432,\"protocol\":\"rest\",\"rules\":[{\"allow\":{\"method\":"
     "\"GET\",\"path\":\"/x\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/psql\"}]}}}]}",
     false, NULL, "protocol tcp does not support"},
};

START_TEST(test_merge)
{
    const struct merge_case *c = &merge_cases[_i];
    struct model_policy *base = load_policy(c->base);
    struct model_proposal *pr = load_proposal(c->proposal);
    struct model_diags *d = model_diags_new();
    char *before = yaml_of(base);
    struct model_policy *m = model_policy_merge(base, pr, c->mark_advisor, d);
    char *after = yaml_of(base);

    /* The base is never modified. */
    ck_assert_str_eq(before, after);
    if (c->expect != NULL) {
        struct model_policy *want = load_policy(c->expect);
        char *got_y;
        char *want_y = yaml_of(want);
        if (m == NULL) {
            dump_diags(d);
        }
        ck_assert_msg(m != NULL, "%s: merge failed", c->name);
        ck_assert_uint_eq(model_diags_count(d), 0);
        got_y = yaml_of(m);
        ck_assert_msg(strcmp(got_y, want_y) == 0, "%s:\n--- got\n%s--- want\n%s", c->name, got_y,
                      want_y);
        /* The result is compiled: the evaluator can use it directly. */
        ck_assert(m->compiled);
        free(got_y);
        free(want_y);
        model_policy_free(want);
    } else {
        if (!diags_have(d, c->error)) {
            dump_diags(d);
        }
        ck_assert_msg(m == NULL, "%s: expected failure", c->name);
        ck_assert_msg(diags_have(d, c->error), "%s: want '%s'", c->name, c->error);
    }
    free(before);
    free(after);
    model_policy_free(m);
    model_policy_free(base);
    model_proposal_free(pr);
    model_diags_free(d);
}
END_TEST

/* The merged policy decides like the policy it spells (compat 901): curl
 * may now PUT the one path, still GET anything, and not PUT elsewhere. */
START_TEST(test_merge_decides)
{
    static const struct {
        const char *method;
        const char *target;
        bool allow;
    } reqs[] = {
        {"PUT", "/repos/o/r/contents/x", true},
        {"GET", "/anything", true},
        {"PUT", "/repos/o/r/contents/y", false},
        {"DELETE", "/repos/o/r/contents/x", false},
    };
    struct model_policy *base = load_policy(GH_RO);
    struct model_proposal *pr = load_proposal("{\"operations\":[" PUT_OP("p", CURL) "]}");
    struct model_diags *d = model_diags_new();
    struct model_policy *m = model_policy_merge(base, pr, true, d);
    const char *bins[] = {"/usr/bin/curl"};
    struct model_ip dest;

    ck_assert_ptr_nonnull(m);
    ck_assert(model_ip_parse("140.82.112.5", 12, &dest));
    for (size_t i = 0; i < PV_ARRAY_LEN(reqs); i++) {
        struct model_request rq;
        struct model_decision out;
        memset(&rq, 0, sizeof(rq));
        rq.binaries = bins;
        rq.nbinaries = 1;
        rq.host = "api.github.com";
        rq.host_len = strlen(rq.host);
        rq.port = 443;
        rq.method = reqs[i].method;
        rq.target = reqs[i].target;
        rq.target_len = strlen(reqs[i].target);
        rq.dest = &dest;
        model_decide(m, &rq, &out);
        ck_assert_msg(out.allow == reqs[i].allow, "%s %s: %s", reqs[i].method, reqs[i].target,
                      out.detail);
        /* The baseline only ever allowed the reads. */
        model_decide(base, &rq, &out);
        ck_assert(out.allow == (strcmp(reqs[i].method, "GET") == 0));
    }
    model_policy_free(m);
    model_policy_free(base);
    model_proposal_free(pr);
    model_diags_free(d);
}
END_TEST

/* A proposal may carry GraphQL rules (docs/semantics.md#graphql): merged
 * into a read-only graphql endpoint, its preset becomes the rule
 * {operation_type: query} beside the proposed mutation rule and deny rule,
 * and the merged policy decides operations as that policy spells them. The
 * registry keys stay refused (an agent may not register persisted queries). */
START_TEST(test_merge_graphql)
{
    static const char base_yaml[] =
        "version: 1\nnetwork_policies:\n  gql:\n    endpoints:\n"
        "      - {host: api.github.com, port: 443, path: /graphql, protocol: graphql,"
        " enforcement: enforce, access: read-only}\n"
        "    binaries: [{path: /usr/bin/gh}]\n";
    static const char prop[] =
        "{\"operations\":[{\"addRule\":{\"ruleName\":\"gql\",\"rule\":{\"endpoints\":[{"
        "\"host\":\"api.github.com\",\"port\":443,\"path\":\"/graphql\",\"protocol\":"
        "\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"operation_type\":"
        "\"mutation\",\"operation_name\":\"Issue*\",\"fields\":[\"createIssue\"]}}],"
        "\"deny_rules\":[{\"operation_type\":\"query\",\"fields\":[\"secret\"]}]}],"
        "\"binaries\":[{\"path\":\"/usr/bin/gh\"}]}}}]}";
    static const char refused[] =
        "{\"operations\":[{\"addRule\":{\"ruleName\":\"gql\",\"rule\":{\"endpoints\":[{"
        "\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"graphql\","
        "\"access\":\"read-only\",\"persisted_queries\":\"allow_registered\"}],"
        "\"binaries\":[{\"path\":\"/usr/bin/gh\"}]}}}]}";
    static const struct {
        enum model_gql_optype t;
        const char *name;
        const char *field;
        bool allow;
    } ops[] = {
        {MODEL_GQL_QUERY, NULL, "viewer", true},
        {MODEL_GQL_QUERY, NULL, "secret", false},
        {MODEL_GQL_MUTATION, "IssueNew", "createIssue", true},
        {MODEL_GQL_MUTATION, NULL, "createIssue", false},
        {MODEL_GQL_MUTATION, "IssueNew", "deleteRepository", false},
        {MODEL_GQL_SUBSCRIPTION, "IssueNew", "createIssue", false},
    };
    struct model_policy *base = load_policy(base_yaml);
    struct model_proposal *pr = load_proposal(prop);
    struct model_diags *d = model_diags_new();
    struct model_policy *m = model_policy_merge(base, pr, true, d);
    const char *bins[] = {"/usr/bin/gh"};
    struct model_ip dest;
    char *y;

    if (m == NULL) {
        dump_diags(d);
    }
    ck_assert_ptr_nonnull(m);
    y = yaml_of(m);
    ck_assert_msg(strstr(y, "operation_type: query") != NULL, "%s", y);
    ck_assert_msg(strstr(y, "access:") == NULL, "%s", y);
    free(y);
    ck_assert(model_ip_parse("140.82.112.5", 12, &dest));
    for (size_t i = 0; i < PV_ARRAY_LEN(ops); i++) {
        char *f[1] = {(char *)(uintptr_t)ops[i].field};
        struct model_gql_op op = {ops[i].t, (char *)(uintptr_t)ops[i].name, f, 1, NULL};
        struct model_request rq;
        struct model_decision out;

        memset(&rq, 0, sizeof(rq));
        rq.binaries = bins;
        rq.nbinaries = 1;
        rq.host = "api.github.com";
        rq.host_len = strlen(rq.host);
        rq.port = 443;
        rq.method = "POST";
        rq.target = "/graphql";
        rq.target_len = 8;
        rq.dest = &dest;
        rq.gql = &op;
        model_decide(m, &rq, &out);
        ck_assert_msg(out.allow == ops[i].allow, "op %zu: %s", i, out.detail);
        /* the baseline allowed queries only, and no deny rule */
        model_decide(base, &rq, &out);
        ck_assert(out.allow == (ops[i].t == MODEL_GQL_QUERY));
    }
    model_policy_free(m);
    model_proposal_free(pr);
    model_diags_free(d);
    d = model_diags_new();
    ck_assert_ptr_null(model_proposal_load("p.json", refused, strlen(refused), d));
    ck_assert(diags_have(d, "endpoint.persisted_queries is not accepted in proposals"));
    model_diags_free(d);
    model_policy_free(base);
}
END_TEST

START_TEST(test_merge_bad_args)
{
    struct model_policy *base = load_policy("version: 1\n");
    struct model_proposal *pr = load_proposal("{\"operations\":[" PUT_OP("p", CURL) "]}");
    struct model_diags *d = model_diags_new();

    ck_assert_ptr_null(model_policy_merge(NULL, pr, true, d));
    ck_assert_ptr_null(model_policy_merge(base, NULL, true, d));
    ck_assert_ptr_null(model_policy_merge(base, pr, true, NULL));
    ck_assert_ptr_null(model_proposal_load("p", NULL, 3, d));
    ck_assert_ptr_null(model_proposal_load("p", "{}", 2, NULL));
    model_policy_free(base);
    model_proposal_free(pr);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Deep copies
 * ========================================================================= */

START_TEST(test_rule_copy)
{
    static const char text[] =
        "version: 1\n"
        "network_policies:\n"
        "  r:\n"
        "    name: the-rule\n"
        "    endpoints:\n"
        "      - host: api.example.com\n"
        "        ports: [443, 8443]\n"
        "        path: /v1/**\n"
        "        protocol: rest\n"
        "        enforcement: enforce\n"
        "        allowed_ips: [10.0.0.0/8]\n"
        "        rules:\n"
        "          - allow:\n"
        "              method: GET\n"
        "              path: /v1/items/*\n"
        "              query: {tag: 'v1-*', env: {any: [prod, 'stage-*']}}\n"
        "        deny_rules: [{method: POST, path: /v1/admin/**}]\n"
        "      - host: db.example.com\n"
        "        port: 5432\n"
        "    binaries: [{path: /usr/bin/curl}, {path: '/opt/**/python3*'}]\n";
    struct model_policy *p = load_policy(text);
    const struct model_rule *src = model_policy_find_rule(p, "r");
    struct model_rule dst;
    const struct model_endpoint *e;

    ck_assert_ptr_nonnull(src);
    ck_assert(pv_ok(model_rule_copy(&dst, src)));
    ck_assert_str_eq(dst.key, "r");
    ck_assert_ptr_ne(dst.key, src->key);
    ck_assert_str_eq(dst.name.s, "the-rule");
    ck_assert_uint_eq(dst.nendpoints, 2);
    ck_assert_uint_eq(dst.nbinaries, 2);
    ck_assert_str_eq(dst.binaries[1].path.s, "/opt/**/python3*");
    ck_assert_ptr_null(dst.binaries[1].glob);
    e = &dst.endpoints[0];
    ck_assert_str_eq(e->host.s, "api.example.com");
    ck_assert_ptr_ne(e->host.s, src->endpoints[0].host.s);
    ck_assert_uint_eq(e->nports, 2);
    ck_assert_uint_eq(e->ports[1], 8443);
    ck_assert_ptr_ne(e->ports, src->endpoints[0].ports);
    ck_assert_str_eq(e->path.s, "/v1/**");
    ck_assert_uint_eq(e->nrules, 1);
    ck_assert_uint_eq(e->rules[0].nquery, 2);
    ck_assert_uint_eq(e->ndeny, 1);
    ck_assert_uint_eq(e->allowed_ips.n, 1);
    ck_assert_uint_eq(e->ncidrs, src->endpoints[0].ncidrs);
    ck_assert(e->enforce);
    ck_assert_int_eq(e->proto, MODEL_PROTO_REST);
    /* Compiled fields are never copied. */
    ck_assert_ptr_nonnull(src->endpoints[0].host_glob);
    ck_assert_ptr_null(e->host_glob);
    ck_assert_ptr_null(e->path_glob);
    ck_assert_ptr_null(e->eff_rules);
    ck_assert_uint_eq(e->neff_rules, 0);
    ck_assert_ptr_null(e->rules[0].path_glob);
    ck_assert_ptr_null(e->rules[0].query[0].compiled);
    /* Clearing the copy leaves the source intact. */
    model_rule_clear(&dst);
    ck_assert_str_eq(src->endpoints[0].host.s, "api.example.com");
    /* Copy of one endpoint. */
    {
        struct model_endpoint ec;
        ck_assert(pv_ok(model_endpoint_copy(&ec, &src->endpoints[1])));
        ck_assert_str_eq(ec.host.s, "db.example.com");
        ck_assert_uint_eq(ec.ports[0], 5432);
        model_endpoint_clear(&ec);
    }
    ck_assert_int_eq(model_rule_copy(&dst, NULL).err, PV_ERR_NULL);
    model_policy_free(p);
}
END_TEST

/* The endpoint's field table (model_int.h): rows name distinct members
 * inside the struct, and a copy driven by it carries every owning member
 * as a new allocation, the values by struct copy (port_written included)
 * and no compiled member (fingerprint, its hash, the IP-literal marks). */
START_TEST(test_endpoint_field_table)
{
    static const char text[] = "version: 1\n"
                               "network_policies:\n"
                               "  r:\n"
                               "    endpoints:\n"
                               "      - host: 10.1.2.3\n"
                               "        port: 8443\n"
                               "        allowed_ips: [10.1.2.3]\n"
                               "        tls: skip\n"
                               "    binaries: [{path: /usr/bin/curl}]\n";
    struct model_policy *p = load_policy(text);
    const struct model_endpoint *src = &model_policy_find_rule(p, "r")->endpoints[0];
    struct model_endpoint ec;

    ck_assert_uint_gt(model_endpoint_nfields, 20);
    for (size_t i = 0; i < model_endpoint_nfields; i++) {
        const struct model_fdesc *f = &model_endpoint_fields[i];

        ck_assert_uint_lt(f->off, sizeof(struct model_endpoint));
        ck_assert_uint_lt(f->count_off, sizeof(struct model_endpoint));
        ck_assert(f->kind != MODEL_FK_ARRAY || f->elem > 1 || f->count_off != f->off);
        for (size_t j = 0; j < i; j++) {
            ck_assert_uint_ne(model_endpoint_fields[j].off, f->off);
            ck_assert_str_ne(model_endpoint_fields[j].name, f->name);
        }
    }
    ck_assert(src->host_is_ip);
    ck_assert_ptr_nonnull(src->fp);
    ck_assert(pv_ok(model_endpoint_copy(&ec, src)));
    ck_assert_str_eq(ec.host.s, "10.1.2.3");
    ck_assert_ptr_ne(ec.host.s, src->host.s);
    ck_assert_str_eq(ec.tls.s, "skip");
    ck_assert_ptr_ne(ec.tls.s, src->tls.s);
    ck_assert(ec.tls_skip);
    ck_assert_uint_eq(ec.port_written, src->port_written);
    ck_assert_uint_eq(ec.nports, 1);
    ck_assert_ptr_ne(ec.ports, src->ports);
    ck_assert_uint_eq(ec.ncidrs, src->ncidrs);
    ck_assert_ptr_ne(ec.cidrs, src->cidrs);
    ck_assert_str_eq(ec.allowed_ips.v[0].s, "10.1.2.3");
    ck_assert_ptr_ne(ec.allowed_ips.v, src->allowed_ips.v);
    ck_assert_ptr_null(ec.fp);
    ck_assert_uint_eq(ec.fplen, 0);
    ck_assert_uint_eq(ec.fphash, 0);
    ck_assert(!ec.host_is_ip);
    ck_assert_ptr_null(ec.host_glob);
    model_endpoint_clear(&ec);
    ck_assert_ptr_null(ec.host.s);
    ck_assert_uint_eq(ec.nports, 0);
    model_endpoint_clear(&ec); /* a second clear is harmless */
    ck_assert_str_eq(src->host.s, "10.1.2.3");
    model_policy_free(p);
}
END_TEST

static Suite *merge_suite(void)
{
    Suite *s = suite_create("model_merge");
    TCase *tc = tcase_create("proposal");

    tcase_add_loop_test(tc, test_proposal_validation, 0, (int)PV_ARRAY_LEN(prop_cases));
    tcase_add_test(tc, test_proposal_locations);
    tcase_add_test(tc, test_proposal_operation_cap);
    tcase_add_test(tc, test_proposal_accessors);
    suite_add_tcase(s, tc);
    tc = tcase_create("merge");
    tcase_add_loop_test(tc, test_merge, 0, (int)PV_ARRAY_LEN(merge_cases));
    tcase_add_test(tc, test_merge_decides);
    tcase_add_test(tc, test_merge_graphql);
    tcase_add_test(tc, test_merge_bad_args);
    tcase_add_test(tc, test_rule_copy);
    tcase_add_test(tc, test_endpoint_field_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(merge_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
