/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_rule.c - what the advisor reads from a proposed rule, its
 * settings messages and its small helpers
 *
 * The security notes, the always-blocked destinations (which keep a
 * proposal out of the inbox altogether), the settings validation messages
 * (exact, as the reference writes them: tools match on them), the event
 * text of a rule and one_line.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "model/model.h"

static json_t *rule(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);

    ck_assert_msg(j != NULL, "bad test JSON: %s", je.text);
    return j;
}

static void notes_are(const char *rule_text, const char *want)
{
    json_t *r = rule(rule_text);
    char *got = advisor_rule_security_notes(r);

    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
    json_decref(r);
}

START_TEST(test_security_notes)
{
    notes_are("{\"endpoints\":[{\"host\":\"example.com\",\"port\":443}]}", "");
    notes_are("{\"endpoints\":[{\"host\":\"example.com\",\"port\":5432}]}",
              "Port 5432 is a well-known database/service port.");
    notes_are("{\"endpoints\":[{\"host\":\"example.com\",\"ports\":[443,50000]}]}",
              "Port 50000 is in the ephemeral range \xe2\x80\x94 this may be a temporary service.");
    notes_are("{\"endpoints\":[{\"host\":\"10.1.2.3\",\"port\":443}]}",
              "Destination '10.1.2.3' appears to be an internal/private address.");
    notes_are("{\"endpoints\":[{\"host\":\"*.example.com\",\"port\":443}]}",
              "Host '*.example.com' contains a wildcard \xe2\x80\x94 this may match unintended "
              "destinations.");
    notes_are("{\"endpoints\":[{\"host\":\"svc.example.com\",\"port\":443,"
              "\"allowed_ips\":[\"10.0.0.0/8\"]}]}",
              "allowed_ips includes private/internal range '10.0.0.0/8'.");
    notes_are("{\"endpoints\":[{\"port\":443,\"allowed_ips\":[\"8.8.8.0/24\"]}]}",
              "allowed_ips allowlist is hostless and may match any hostname resolving within "
              "the configured range.");
    notes_are("{\"endpoints\":[{\"host\":\"a.com\",\"port\":443,"
              "\"allow_uninspected_credentials\":true}]}",
              "Endpoint 'a.com' explicitly allows credentials on traffic the proxy cannot "
              "inspect or rewrite.");
    /* Two endpoints with the same note: once. Two notes: space-joined. */
    notes_are("{\"endpoints\":[{\"host\":\"a.com\",\"port\":6379},{\"host\":\"b.com\","
              "\"port\":6379},{\"host\":\"c.com\",\"port\":3306}]}",
              "Port 6379 is a well-known database/service port. Port 3306 is a well-known "
              "database/service port.");
}
END_TEST

static const char *blocked(const char *host, bool loopback)
{
    static char text[512];
    static const char *got;
    json_t *r;

    snprintf(text, sizeof(text), "{\"endpoints\":[{\"host\":\"%s\",\"port\":80}]}", host);
    r = rule(text);
    got = advisor_rule_blocked_host(r, loopback);
    json_decref(r);
    return got;
}

START_TEST(test_blocked_hosts)
{
    static const char *const yes[] = {
        "169.254.169.254",
        "metadata.google.internal",
        "METADATA.GOOGLE.INTERNAL.",
        "**.google.internal",
        "*.google.internal",
        "fe80::1",
        "::ffff:169.254.169.254",
        "127.0.0.1",
        "localhost",
        "0.0.0.0",
        "2852039166",
        "127.1",
        "[::1]",
    };
    static const char *const no[] = {"example.com", "10.0.0.1", "api.github.com", "*.example.com",
                                     "8.8.8.8"};
    json_t *r;

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        ck_assert_msg(blocked(yes[i], false) != NULL, "%s should be blocked", yes[i]);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        ck_assert_msg(blocked(no[i], false) == NULL, "%s should pass", no[i]);
    }
    /* The test switch admits exactly the literal 127.0.0.1. */
    ck_assert_ptr_null(blocked("127.0.0.1", true));
    ck_assert_ptr_nonnull(blocked("127.0.0.2", true));
    ck_assert_ptr_nonnull(blocked("localhost", true));
    ck_assert_ptr_nonnull(blocked("169.254.169.254", true));
    r = rule("{\"endpoints\":[{\"port\":80,\"allowed_ips\":[\"169.254.0.0/16\"]}]}");
    ck_assert_str_eq(advisor_rule_blocked_host(r, false), "169.254.0.0/16");
    json_decref(r);
}
END_TEST

static void setting_msg(const char *key, const char *value_json, const char *want)
{
    char buf[512];
    json_t *v = json_loads(value_json, JSON_DECODE_ANY, NULL);
    const char *got;

    ck_assert_ptr_nonnull(v);
    got = advisor_setting_check(key, v, buf, sizeof(buf));
    if (want == NULL) {
        ck_assert_msg(got == NULL, "%s=%s refused: %s", key, value_json, got);
    } else {
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
    }
    json_decref(v);
}

START_TEST(test_settings_messages)
{
    static const char *const typos[] = {"\"AUTO\"",   "\"autom\"", "\" auto\"",
                                        "\"Manual\"", "\"\"",      "\"auto_on_low_risk\"",
                                        "\"yes\""};

    setting_msg("proposal_approval_mode", "\"auto\"", NULL);
    setting_msg("proposal_approval_mode", "\"manual\"", NULL);
    for (size_t i = 0; i < sizeof(typos) / sizeof(typos[0]); i++) {
        char want[256];
        json_t *v = json_loads(typos[i], JSON_DECODE_ANY, NULL);
        snprintf(want, sizeof(want),
                 "setting 'proposal_approval_mode' expects one of [manual, auto]; got '%s'",
                 json_string_value(v));
        json_decref(v);
        setting_msg("proposal_approval_mode", typos[i], want);
    }
    setting_msg("proposal_approval_mode", "true",
                "setting 'proposal_approval_mode' expects string value");
    setting_msg("agent_policy_proposals_enabled", "true", NULL);
    setting_msg("agent_policy_proposals_enabled", "\"true\"",
                "setting 'agent_policy_proposals_enabled' expects bool value");
    setting_msg("policy", "1",
                "unknown setting key 'policy'. Allowed keys: agent_policy_proposals_enabled, "
                "proposal_approval_mode, peer_address_ranges, auto_approval_envelope, "
                "envelope_allow_binary_globs, envelope_allow_host_wildcards, "
                "envelope_allow_uninspected, envelope_allow_access_presets, "
                "envelope_allow_new_ports");
    setting_msg("auto_approval_envelope", "\"off\"",
                "setting 'auto_approval_envelope' expects bool value");
    setting_msg("envelope_allow_new_ports", "true", NULL);
}
END_TEST

/* peer_address_ranges: a list of canonical CIDRs (docs/advisor.md#peers). */
static const struct {
    const char *value; /* JSON */
    const char *want;  /* NULL: accepted; else after "setting 'peer_address_ranges' " */
} ranges_rows[] = {
    {"[]", NULL},
    {"[\"10.0.0.0/8\", \"fd00::/8\", \"10.1.2.3\", \"2001:db8::1\", \"0.0.0.0/0\", \"::/0\"]",
     NULL},
    {"[\"127.0.0.0/24\"]", NULL},
    {"[\"10.0.0.5/32\"]", NULL},
    {"\"10.0.0.0/8\"", "expects list value"},
    {"null", "expects list value"},
    {"{\"cidr\": \"10.0.0.0/8\"}", "expects list value"},
    {"[5]", "expects a list of CIDR strings; entry 0 is not a string"},
    {"[\"10.0.0.0/8\", null]", "expects a list of CIDR strings; entry 1 is not a string"},
    {"[\"db.internal\"]",
     "expects a list of canonical CIDRs; got 'db.internal' (invalid IP address)"},
    {"[\"\"]", "expects a list of canonical CIDRs; got '' (empty CIDR)"},
    {"[\"10.0.0.1/8\"]", "expects a list of canonical CIDRs; got '10.0.0.1/8' (host bits set)"},
    {"[\"10.0.0.0/33\"]",
     "expects a list of canonical CIDRs; got '10.0.0.0/33' (invalid prefix length)"},
    {"[\"10.0.0.0/\"]",
     "expects a list of canonical CIDRs; got '10.0.0.0/' (invalid prefix length)"},
    {"[\"10.0.0.0/08\"]",
     "expects a list of canonical CIDRs; got '10.0.0.0/08' (not canonical, write '10.0.0.0/8')"},
    {"[\"10.0.0.0/8 \"]",
     "expects a list of canonical CIDRs; got '10.0.0.0/8 ' (invalid prefix length)"},
    {"[\"010.0.0.0/8\"]",
     "expects a list of canonical CIDRs; got '010.0.0.0/8' (invalid IP address)"},
    {"[\"10.1\"]", "expects a list of canonical CIDRs; got '10.1' (invalid IP address)"},
    {"[\"2001:DB8::/32\"]", "expects a list of canonical CIDRs; got '2001:DB8::/32' (not "
                            "canonical, write '2001:db8::/32')"},
    {"[\"2001:0db8::/32\"]", "expects a list of canonical CIDRs; got '2001:0db8::/32' (not "
                             "canonical, write '2001:db8::/32')"},
    {"[\"::ffff:10.0.0.0/104\"]", "expects a list of canonical CIDRs; got '::ffff:10.0.0.0/104' "
                                  "(not canonical, write '10.0.0.0/8')"},
    {"[\"[::1]\"]", "expects a list of canonical CIDRs; got '[::1]' (not canonical, write '::1')"},
    {"[\"10.0.0.0/8\", \"10.0.0.0/8\"]",
     "expects a list of canonical CIDRs; got '10.0.0.0/8' twice"},
};

START_TEST(test_settings_ranges)
{
    char want[512];

    if (ranges_rows[_i].want != NULL) {
        snprintf(want, sizeof(want), "setting 'peer_address_ranges' %s", ranges_rows[_i].want);
    }
    setting_msg("peer_address_ranges", ranges_rows[_i].value,
                ranges_rows[_i].want != NULL ? want : NULL);
}
END_TEST

START_TEST(test_settings_ranges_max)
{
    json_t *v = json_array();
    char buf[512];

    for (int i = 0; i <= ADVISOR_PEER_RANGES_MAX; i++) {
        char cidr[32];
        snprintf(cidr, sizeof(cidr), "10.%d.0.0/16", i);
        json_array_append_new(v, json_string(cidr));
    }
    ck_assert_str_eq(advisor_setting_check("peer_address_ranges", v, buf, sizeof(buf)),
                     "setting 'peer_address_ranges' expects at most 64 CIDRs; got 65");
    json_array_remove(v, 0);
    ck_assert_ptr_null(advisor_setting_check("peer_address_ranges", v, buf, sizeof(buf)));
    json_decref(v);
}
END_TEST

START_TEST(test_rule_text)
{
    json_t *r = rule("{\"endpoints\":[{\"host\":\"API.GitHub.com\",\"port\":443,"
                     "\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":"
                     "{\"method\":\"PUT\",\"path\":\"/repos/*/issues\"}}],\"deny_rules\":[{"
                     "\"method\":\"DELETE\",\"path\":\"/**\"}]}],\"binaries\":[{\"path\":"
                     "\"/usr/bin/gh\"},{\"path\":\"/usr/bin/curl\"}]}");
    char host[64];
    char bin[64];
    int64_t port = 0;
    char *d = advisor_rule_describe(r);
    char *sum = advisor_rule_summary(r, "gh");

    advisor_rule_key(r, host, sizeof(host), &port, bin, sizeof(bin));
    ck_assert_str_eq(host, "api.github.com");
    ck_assert_int_eq(port, 443);
    ck_assert_str_eq(bin, "/usr/bin/gh");
    ck_assert_str_eq(d, "endpoints=[API.GitHub.com:443 protocol=rest enforcement=enforce "
                        "allow=[PUT /repos/*/issues] deny=[DELETE /**]] binaries=[/usr/bin/gh, "
                        "/usr/bin/curl]");
    ck_assert_str_eq(sum, "on API.GitHub.com:443 PUT /repos/*/issues by /usr/bin/gh");
    free(d);
    free(sum);
    json_decref(r);
    /* each kind of rule in its own words: a GraphQL mutation, MCP calls, a
     * REST allow rule without a method (grants nothing) */
    r = rule("{\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"protocol\":"
             "\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"operation_type\":"
             "\"mutation\",\"operation_name\":\"CreateIssue\",\"fields\":[\"createIssue\"]}}]},"
             "{\"host\":\"mcp.example.com\",\"port\":443,\"protocol\":\"mcp\",\"rules\":[{"
             "\"allow\":{\"tool\":\"create_*\"}},{\"allow\":{\"method\":\"tools/list\"}},{"
             "\"allow\":{\"params\":{\"name\":{\"any\":[\"a\",\"b\"]}}}}],\"deny_rules\":[{"
             "\"tool\":\"delete_*\"}]},{\"host\":\"x.example.com\",\"port\":443,\"protocol\":"
             "\"rest\",\"rules\":[{\"allow\":{\"path\":\"/x\"}}]}],\"binaries\":[{\"path\":"
             "\"/usr/bin/gh\"}]}");
    d = advisor_rule_describe(r);
    sum = advisor_rule_summary(r, "gql");
    ck_assert_str_eq(d, "endpoints=[api.github.com:443 protocol=graphql enforcement=enforce "
                        "allow=[graphql mutation CreateIssue fields=createIssue], "
                        "mcp.example.com:443 protocol=mcp allow=[call tools/call tool=create_*, "
                        "call tools/list, call tools/call tool=a|b] deny=[call tools/call "
                        "tool=delete_*], x.example.com:443 protocol=rest allow=[(no method) /x]] "
                        "binaries=[/usr/bin/gh]");
    ck_assert_str_eq(sum, "on api.github.com:443 graphql mutation CreateIssue fields=createIssue "
                          "by /usr/bin/gh");
    ck_assert_ptr_null(strstr(d, "* **"));
    free(d);
    free(sum);
    json_decref(r);
    r = rule("{}");
    sum = advisor_rule_summary(r, "lonely");
    ck_assert_str_eq(sum, "rule_name:lonely");
    free(sum);
    json_decref(r);
}
END_TEST

START_TEST(test_helpers)
{
    char id[37];
    char *s = advisor_one_line("  merge failed\n\n  endpoint x: bad  \r\n last ");

    ck_assert_str_eq(s, "merge failed; endpoint x: bad; last");
    free(s);
    s = advisor_one_line("\n\n");
    ck_assert_str_eq(s, "");
    free(s);
    ck_assert(pv_ok(advisor_uuid(id)));
    ck_assert_uint_eq(strlen(id), 36);
    ck_assert(id[8] == '-' && id[13] == '-' && id[14] == '4' && id[18] == '-' && id[23] == '-');
    ck_assert(strchr("89ab", id[19]) != NULL);
    ck_assert(advisor_name_valid("sb-1.dev_x"));
    ck_assert(!advisor_name_valid(""));
    ck_assert(!advisor_name_valid("-lead"));
    ck_assert(!advisor_name_valid("Upper"));
    ck_assert(!advisor_name_valid("a/b"));
    ck_assert(!advisor_name_valid("a b"));
}
END_TEST

/* model_host_lower: the one host lower-casing the advisor uses (rule
 * keys, always-blocked checks, the envelope, suggestions). */
START_TEST(test_host_lower)
{
    char out[8];
    char big[300];

    ck_assert(model_host_lower("Api.GitHub.COM", big, sizeof(big)));
    ck_assert_str_eq(big, "api.github.com");
    ck_assert(model_host_lower("*.Ex-1.io", big, sizeof(big)));
    ck_assert_str_eq(big, "*.ex-1.io");
    /* only ASCII letters move: bytes of other scripts stay as they are */
    ck_assert(model_host_lower("\xc3\x84"
                               "B",
                               big, sizeof(big)));
    ck_assert_str_eq(big, "\xc3\x84"
                          "b");
    /* too long: false, with the prefix that fits, terminated */
    ck_assert(!model_host_lower("ABCDEFGHIJ", out, sizeof(out)));
    ck_assert_str_eq(out, "abcdefg");
    ck_assert(model_host_lower("ABCDEFG", out, sizeof(out)));
    ck_assert(!model_host_lower(NULL, out, sizeof(out)));
    ck_assert_str_eq(out, "");
    ck_assert(!model_host_lower("a", out, 0));
}
END_TEST

START_TEST(test_tokens)
{
    struct advisor_tokens *t = advisor_tokens_new();
    static const char tok[] = "0123456789abcdef0123456789abcdef";
    char hex[65];

    advisor_sha256_hex(tok, strlen(tok), hex);
    ck_assert(pv_ok(advisor_tokens_put(t, hex, 7)));
    ck_assert_int_eq(advisor_tokens_find(t, tok, strlen(tok)), 7);
    ck_assert_int_eq(advisor_tokens_find(t, tok, strlen(tok) - 1), -1);
    ck_assert_int_eq(advisor_tokens_find(t, "short", 5), -1);
    ck_assert(!pv_ok(advisor_tokens_put(t, "not-hex", 8)));
    advisor_tokens_drop(t, 7);
    ck_assert_int_eq(advisor_tokens_find(t, tok, strlen(tok)), -1);
    advisor_tokens_free(t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_rule");
    TCase *t = tcase_create("rule");

    tcase_add_test(t, test_security_notes);
    tcase_add_test(t, test_blocked_hosts);
    tcase_add_test(t, test_settings_messages);
    tcase_add_loop_test(t, test_settings_ranges, 0, (int)PV_ARRAY_LEN(ranges_rows));
    tcase_add_test(t, test_settings_ranges_max);
    tcase_add_test(t, test_rule_text);
    tcase_add_test(t, test_helpers);
    tcase_add_test(t, test_tokens);
    tcase_add_test(t, test_host_lower);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
