/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_local.c - unit tests of proxy_local.c and proxy_skill.c
 *
 * What policy.local hands to agents must not leak what the proxy never logs:
 * GET /v1/denials redacts every query and fragment (table, with negative
 * rows that must pass unchanged), its numeric query parameters clamp like
 * the reference's, the decision log hands exactly its DENIED lines to the
 * ring, and the L7 deny body carries the four next_steps and the guidance
 * only while proposals are on. The skill file is written read-only.
 */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_graphql.h"
#include "proxy/advisor/proxy_advisor.h"

/* ---------------------------------------------------------------------------
 * Redaction
 * ------------------------------------------------------------------------- */

static const struct {
    const char *in;
    const char *out;
} redact_cases[] = {
    {"GET http://h/p?token=abc [policy:x]", "GET http://h/p?[redacted] [policy:x]"},
    {"GET http://h/p?a=1&b=2", "GET http://h/p?[redacted]"},
    {"[reason:GET /x?k=v] tail", "[reason:GET /x?[redacted]] tail"},
    {"GET http://h/p#frag more", "GET http://h/p#[redacted] more"},
    {"GET http://h/p?q=1#frag", "GET http://h/p?[redacted]"},
    {"two ?a=1 and ?b=2", "two ?[redacted] and ?[redacted]"},
    {"already http://h/p?[redacted] [policy:x]", "already http://h/p?[redacted] [policy:x]"},
    {"trailing ?", "trailing ?[redacted]"},
    {"tab?x=1\tnext", "tab?[redacted]\tnext"},
    /* negative rows: nothing to redact */
    {"GET http://h/plain [policy:x engine:l7]", "GET http://h/plain [policy:x engine:l7]"},
    {"", ""},
    {"no marks at all", "no marks at all"},
};

START_TEST(test_redact)
{
    char out[256];
    const char *in = redact_cases[_i].in;

    proxy_local_redact(in, strlen(in), out, sizeof(out));
    ck_assert_str_eq(out, redact_cases[_i].out);
}
END_TEST

START_TEST(test_redact_bounds)
{
    char small[8];
    char out[64];
    const char *in = "abc?secretsecretsecret";

    /* never overflows, never emits a partial marker */
    proxy_local_redact(in, strlen(in), small, sizeof(small));
    ck_assert_str_eq(small, "abc");
    ck_assert(strstr(small, "secret") == NULL);
    proxy_local_redact(in, strlen(in), out, sizeof(out));
    ck_assert_str_eq(out, "abc?[redacted]");
    /* the length bounds the input, not a NUL */
    proxy_local_redact("ab?x cd", 2, out, sizeof(out));
    ck_assert_str_eq(out, "ab");
}
END_TEST

/* ---------------------------------------------------------------------------
 * Query numbers
 * ------------------------------------------------------------------------- */

static const struct {
    const char *query;
    unsigned want;
} last_cases[] = {
    {NULL, 10},
    {"", 10},
    {"last=5", 5},
    {"last=999", 100},
    {"last=0", 1},
    {"last=100", 100},
    {"other=1", 10},
    {"x=1&last=7", 7},
    {"last=abc", 10},
    {"last=", 10},
    {"last=-3", 10},
    {"last=5x", 10},
    {"lastx=3", 10},
    {"last=3&last=9", 3},
    {"last=99999999999999999999999", 10},
};

START_TEST(test_last)
{
    ck_assert_uint_eq(proxy_local_query_uint(last_cases[_i].query, "last", 10, 1, 100),
                      last_cases[_i].want);
}
END_TEST

START_TEST(test_timeout)
{
    ck_assert_uint_eq(proxy_local_query_uint(NULL, "timeout", 60, 1, 300), 60);
    ck_assert_uint_eq(proxy_local_query_uint("timeout=0", "timeout", 60, 1, 300), 1);
    ck_assert_uint_eq(proxy_local_query_uint("timeout=301", "timeout", 60, 1, 300), 300);
    ck_assert_uint_eq(proxy_local_query_uint("timeout=2.5", "timeout", 60, 1, 300), 60);
}
END_TEST

/* ---------------------------------------------------------------------------
 * The decision log's tap feeds only DENIED lines
 * ------------------------------------------------------------------------- */

static char tapped[8][512];
static size_t ntapped;

static char tapped_host[64];

static void tap(void *arg, const char *line, size_t len, const struct proxy_log_event *e)
{
    (void)arg;
    snprintf(tapped_host, sizeof(tapped_host), "%s", e != NULL ? e->host : "(no record)");
    if (ntapped < 8) {
        snprintf(tapped[ntapped++], sizeof(tapped[0]), "%.*s", (int)len, line);
    }
}

START_TEST(test_tap)
{
    struct proxy_log *l = proxy_log_new("/dev/null", NULL);
    struct proxy_log_event e;
    char red[600];

    ck_assert_ptr_nonnull(l);
    ntapped = 0;
    proxy_log_set_tap(l, tap, NULL);
    memset(&e, 0, sizeof(e));
    e.engine = "l7";
    e.host = "api.example.com";
    e.port = 443;
    e.method = "GET";
    e.path = "/repos/x";
    e.has_query = true;
    e.policy = "api";
    e.reason = "GET /repos/x not permitted by policy";
    e.action = PROXY_LOG_ALLOWED;
    proxy_log_event(l, &e);
    e.action = PROXY_LOG_AUDIT;
    proxy_log_event(l, &e);
    ck_assert_uint_eq(ntapped, 0);
    e.action = PROXY_LOG_DENIED;
    proxy_log_event(l, &e);
    ck_assert_uint_eq(ntapped, 1);
    ck_assert(strstr(tapped[0], " DENIED ") != NULL);
    ck_assert(strstr(tapped[0], "/repos/x?[redacted] [policy:api engine:l7]") != NULL);
    ck_assert(strchr(tapped[0], '\n') == NULL);
    /* the record comes with the line: /v1/denials answers its fields */
    ck_assert_str_eq(tapped_host, "api.example.com");
    proxy_local_redact(tapped[0], strlen(tapped[0]), red, sizeof(red));
    ck_assert_str_eq(red, tapped[0]); /* already redacted: unchanged */
    proxy_log_set_tap(l, NULL, NULL);
    proxy_log_event(l, &e);
    ck_assert_uint_eq(ntapped, 1);
    proxy_log_free(l);
}
END_TEST

/* ---------------------------------------------------------------------------
 * The deny body's advice
 * ------------------------------------------------------------------------- */

START_TEST(test_advice)
{
    json_t *on = json_object();
    json_t *off = json_object();
    json_t *s;

    proxy_reply_advice(on, "/data/skills/policy_advisor.md");
    s = json_object_get(on, "next_steps");
    ck_assert_uint_eq(json_array_size(s), 4);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 0), "action")),
                     "read_skill");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 0), "path")),
                     "/data/skills/policy_advisor.md");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 1), "url")),
                     "http://policy.local/v1/policy/current");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 2), "url")),
                     "http://policy.local/v1/denials?last=5");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 3), "body_type")),
                     "PolicyMergeOperation");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(s, 3), "method")), "POST");
    ck_assert(strstr(json_string_value(json_object_get(on, "agent_guidance")),
                     "/data/skills/policy_advisor.md") != NULL);
    proxy_reply_advice(off, NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(off, "next_steps")), 0);
    ck_assert_ptr_null(json_object_get(off, "agent_guidance"));
    json_decref(on);
    json_decref(off);
}
END_TEST

START_TEST(test_reply_l7_advice)
{
    struct proxy_l7_deny d = {"policy_denied",        "api",       "PUT", "/x",
                              "PUT /x not permitted", "h.example", 443,   "/usr/bin/curl",
                              "/s/policy_advisor.md", NULL,        false};
    size_t len = 0;
    char *r = proxy_reply_l7(&d, &len);
    const char *b;

    ck_assert_ptr_nonnull(r);
    b = strstr(r, "\r\n\r\n");
    ck_assert_ptr_nonnull(b);
    /* the reference's key order: next_steps, then agent_guidance, last */
    ck_assert(strstr(b, "},\"next_steps\":[{\"action\":\"read_skill\",\"path\":"
                        "\"/s/policy_advisor.md\"},") != NULL);
    ck_assert(strstr(b, "\"agent_guidance\":\"") > strstr(b, "\"next_steps\""));
    free(r);
    d.skill = NULL;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\"next_steps\":[]}") != NULL);
    ck_assert(strstr(r, "agent_guidance") == NULL);
    free(r);
}
END_TEST

/* A GraphQL denial's body is a GraphQL one: the operation refused, the
 * GraphQL rule missing (never rest_allow), the advice unchanged; without a
 * readable operation nothing is missing; a persisted query points at the
 * registry. Hostile names stay JSON strings. */
START_TEST(test_reply_l7_graphql)
{
    char f1[] = "addLabel";
    char f2[] = "createIssue";
    char name[] = "Create\"Issue";
    char pid[] = "abc";
    char *fields[] = {f1, f2};
    struct model_gql_op op = {MODEL_GQL_MUTATION, name, fields, 2, NULL};
    struct proxy_l7_deny d = {"policy_denied",        "gh",        "POST", "/graphql",
                              "not permitted",        "h.example", 443,    "/usr/bin/gh",
                              "/s/policy_advisor.md", NULL,        false};
    size_t len = 0;
    char *r;
    json_t *j;
    const json_t *m;

    d.gql = &op;
    d.gql_endpoint = true;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    j = json_loads(strstr(r, "\r\n\r\n") + 4, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "protocol")), "graphql");
    ck_assert_str_eq(json_string_value(json_object_get(j, "rule")),
                     "POST /graphql mutation Create\"Issue {addLabel,createIssue}");
    m = json_object_get(j, "rule_missing");
    ck_assert_str_eq(json_string_value(json_object_get(m, "type")), "graphql_allow");
    ck_assert_str_eq(json_string_value(json_object_get(m, "operation_type")), "mutation");
    ck_assert_str_eq(json_string_value(json_object_get(m, "operation_name")), "Create\"Issue");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "fields")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(m, "host")), "h.example");
    ck_assert_str_eq(json_string_value(json_object_get(m, "binary")), "/usr/bin/gh");
    ck_assert_ptr_null(json_object_get(m, "method"));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "next_steps")), 4);
    ck_assert_ptr_nonnull(json_object_get(j, "agent_guidance"));
    json_decref(j);
    free(r);
    /* anonymous: no operation_name anywhere */
    op.name = NULL;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "operation_name") == NULL);
    ck_assert(strstr(r, "\"rule\":\"POST /graphql mutation {addLabel,createIssue}\"") != NULL);
    free(r);
    /* a persisted query: the registry is what is missing */
    op.persisted_id = pid;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\"rule_missing\":{\"type\":\"graphql_persisted_query\"") != NULL);
    free(r);
    /* no operation read on a graphql endpoint: protocol graphql, nothing missing */
    d.gql = NULL;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\"protocol\":\"graphql\"") != NULL);
    ck_assert(strstr(r, "rule_missing") == NULL);
    ck_assert(strstr(r, "\"next_steps\":[{") != NULL);
    free(r);
    /* a REST endpoint stays the reference's body */
    d.gql_endpoint = false;
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\"protocol\":\"rest\"") != NULL);
    ck_assert(strstr(r, "\"type\":\"rest_allow\"") != NULL);
    free(r);
}
END_TEST

/* The L4 body: with proposals on, a denial that no rule covers names host,
 * port, binary and layer, and carries the advice; with proposals off, or
 * for an outcome without 'missing', it is the reference's three keys. */
START_TEST(test_reply_json_advice)
{
    struct proxy_missing m = {"endpoint", "nowhere.example", 8081, "/usr/bin/curl",
                              "/s/policy_advisor.md"};
    const struct proxy_outcome_row *row;
    size_t len = 0;
    char *r =
        proxy_reply_json(403, "policy_denied", "CONNECT nowhere.example:8081 not permitted",
                         "endpoint nowhere.example:8081 is not allowed by any policy", &m, &len);
    json_t *o;
    json_t *miss;

    ck_assert_ptr_nonnull(r);
    o = json_loads(strstr(r, "\r\n\r\n") + 4, 0, NULL);
    ck_assert_ptr_nonnull(o);
    miss = json_object_get(o, "rule_missing");
    ck_assert_str_eq(json_string_value(json_object_get(miss, "type")), "endpoint");
    ck_assert_str_eq(json_string_value(json_object_get(miss, "layer")), "l4");
    ck_assert_str_eq(json_string_value(json_object_get(miss, "host")), "nowhere.example");
    ck_assert_int_eq(json_integer_value(json_object_get(miss, "port")), 8081);
    ck_assert_str_eq(json_string_value(json_object_get(miss, "binary")), "/usr/bin/curl");
    ck_assert_uint_eq(json_array_size(json_object_get(o, "next_steps")), 4);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "agent_guidance")),
                                 "http://policy.local/v1/proposals"));
    /* the reference's keys stay first */
    ck_assert_ptr_nonnull(strstr(r, "\r\n\r\n{\"detail\":\"CONNECT nowhere.example:8081"));
    json_decref(o);
    free(r);
    /* an unknown binary is left out, not written as "-" */
    m.binary = "-";
    r = proxy_reply_json(403, "ssrf_denied", "x", NULL, &m, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(strstr(r, "\"binary\""));
    ck_assert_ptr_nonnull(strstr(r, "\"rule_missing\":{\"type\":\"endpoint\",\"layer\":\"l4\""));
    free(r);
    /* negative: proposals off (no skill) - no advice, no rule_missing */
    m.skill = NULL;
    r = proxy_reply_json(403, "policy_denied", "d", "why", &m, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(r, "\r\n\r\n{\"detail\":\"d\",\"error\":\"policy_denied\","
                                    "\"reason\":\"why\"}"));
    free(r);
    /* the table: the no-rule and destination denials name what is missing,
     * outcomes no rule can lift do not */
    row = proxy_outcome_row(PROXY_OUT_CONNECT_DENIED);
    ck_assert_str_eq(row->missing, "endpoint");
    row = proxy_outcome_row(PROXY_OUT_FORWARD_DENIED);
    ck_assert_str_eq(row->missing, "endpoint");
    row = proxy_outcome_row(PROXY_OUT_SSRF);
    ck_assert_str_eq(row->missing, "destination");
    row = proxy_outcome_row(PROXY_OUT_TUNNEL_SSRF);
    ck_assert_str_eq(row->missing, "destination");
    ck_assert_ptr_null(proxy_outcome_row(PROXY_OUT_FORWARD_TARGET)->missing);
    ck_assert_ptr_null(proxy_outcome_row(PROXY_OUT_TUNNEL_PROTOCOL)->missing);
    ck_assert_ptr_null(proxy_outcome_row(PROXY_OUT_POLICY_LOCAL)->missing);
    ck_assert_ptr_null(proxy_outcome_row(PROXY_OUT_DNS)->missing);
}
END_TEST

/* ---------------------------------------------------------------------------
 * The skill file
 * ------------------------------------------------------------------------- */

/* Which failed advisor calls move to the next replica: never a write the
 * first replica may have done. */
static const struct {
    const char *method;
    const char *path;
    bool answered;
    long status;
    bool unsent; /* hclient: the failed transfer cannot have reached it */
    bool want;
} failover_cases[] = {
    /* the policy long-poll and other reads: any failure, 502/503/504 */
    {"GET", "/policy?after=3", false, 0, false, true},
    {"GET", "/policy", false, 0, true, true},
    {"GET", "/policy", true, 503, false, true},
    {"GET", "/policy", true, 502, false, true},
    {"GET", "/policy", true, 504, false, true},
    {"GET", "/policy", true, 200, false, false},
    {"GET", "/policy", true, 401, false, false},
    {"GET", "/policy", true, 500, false, false},
    {"GET", "/proposals/x/wait", true, 404, false, false},
    /* idempotent writes */
    {"PUT", "/addresses", false, 0, false, true},
    {"POST", "/loaded", false, 0, false, true},
    {"POST", "/loaded", true, 502, false, true},
    {"POST", "/loaded", true, 409, false, false},
    /* a proposal: only when the first replica cannot have acted on it */
    {"POST", "/proposals", false, 0, true, true},
    {"POST", "/proposals", true, 503, false, true},
    {"POST", "/proposals", false, 0, false, false},
    {"POST", "/proposals", true, 502, false, false},
    {"POST", "/proposals", true, 504, false, false},
    {"POST", "/proposals", true, 202, false, false},
    {"POST", "/denials", false, 0, false, false},
    {"POST", "/denials", false, 0, true, true},
    {"POST", "/tools", true, 500, false, false},
};

START_TEST(test_failover)
{
    ck_assert_msg(
        proxy_advisor_may_fail_over(failover_cases[_i].method, failover_cases[_i].path,
                                    failover_cases[_i].answered, failover_cases[_i].status,
                                    failover_cases[_i].unsent) == failover_cases[_i].want,
        "%s %s answered=%d %ld unsent=%d", failover_cases[_i].method, failover_cases[_i].path,
        failover_cases[_i].answered, failover_cases[_i].status, failover_cases[_i].unsent);
}
END_TEST

START_TEST(test_skill)
{
    char dir[] = "/tmp/pv-skill.XXXXXX";
    char path[128];
    char err[256];
    struct stat st;
    const char *t = proxy_skill_text();

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/sub/policy_advisor.md", dir);
    ck_assert_int_eq(proxy_skill_write(path, err, sizeof(err)), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0444);
    ck_assert_uint_eq((size_t)st.st_size, strlen(t));
    /* a second write replaces the read-only file */
    ck_assert_int_eq(proxy_skill_write(path, err, sizeof(err)), 0);
    ck_assert(strstr(t, "http://policy.local") != NULL);
    ck_assert(strstr(t, "/wait?timeout=300") != NULL);
    ck_assert(strstr(t, "policy_reloaded: true") != NULL);
    ck_assert(strstr(t, "accepted_chunk_ids") != NULL);
    ck_assert(strstr(t, "rejection_reason") != NULL);
    ck_assert(strstr(t, "`access: full`") != NULL);
    /* what the proxy sends on every refusal, as the skill describes it */
    ck_assert(strstr(t, "`layer: \"l4\"`, `type: \"endpoint\"`") != NULL);
    ck_assert(strstr(t, "`layer: \"l7\"`, `type: \"rest_allow\"`") != NULL);
    ck_assert(strstr(t, "`layer: \"l4\"`, `type: \"destination\"`") != NULL);
    ck_assert(strstr(t, "of a CONNECT") != NULL);
    ck_assert(strstr(t, "`rule_missing` names `host`, `port`, `binary`") != NULL);
    unlink(path);
    snprintf(path, sizeof(path), "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    /* an unwritable place fails with a message */
    ck_assert_int_eq(proxy_skill_write("/proc/pv-no/such/skill.md", err, sizeof(err)), -1);
    ck_assert(err[0] != '\0');
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proxy_local");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_redact, 0, (int)PV_ARRAY_LEN(redact_cases));
    tcase_add_test(tc, test_redact_bounds);
    tcase_add_loop_test(tc, test_last, 0, (int)PV_ARRAY_LEN(last_cases));
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_tap);
    tcase_add_test(tc, test_advice);
    tcase_add_test(tc, test_reply_l7_advice);
    tcase_add_test(tc, test_reply_l7_graphql);
    tcase_add_test(tc, test_reply_json_advice);
    tcase_add_test(tc, test_skill);
    tcase_add_loop_test(tc, test_failover, 0, (int)PV_ARRAY_LEN(failover_cases));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
