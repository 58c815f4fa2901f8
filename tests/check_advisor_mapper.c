/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_mapper.c - the mechanistic mapper's rules (advisor_mapper.c)
 *
 * What a wrong mapper would break: a proposal broader than what was seen
 * (a `**` glob, `access`, an ID segment kept as a literal or a literal
 * segment turned into `*`, a sample with glob characters passed through),
 * a proposal for an always-blocked destination, a wrong rule name or
 * confidence, duplicate or unsorted rules, L7 without samples.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"

static void gen_is(const char *in, const char *want)
{
    char out[512];
    bool ok = advisor_mapper_generalise(in, out, sizeof(out));

    if (want == NULL) {
        ck_assert_msg(!ok, "'%s' generalised to '%s', want no form", in, out);
    } else {
        ck_assert_msg(ok, "'%s' has no generalised form", in);
        ck_assert_msg(strcmp(out, want) == 0, "'%s' -> '%s', want '%s'", in, out, want);
    }
}

START_TEST(test_generalise)
{
    gen_is("/", "/");
    gen_is("/j/abc123def456abcd0099", "/j/*");
    gen_is("/json/?fields=a,b", "/json/");
    gen_is("/items/42", "/items/*");
    gen_is("/items/42/details", "/items/*/details");
    gen_is("/v1/users/7", "/v1/users/7"); /* one digit is not an id */
    gen_is("/v2", "/v2");
    gen_is("/repos/o/r/commits/0123456789abcdef0123", "/repos/o/r/commits/*");
    gen_is("/x/123e4567-e89b-12d3-a456-426614174000/y", "/x/*/y");
    gen_is("/x/deadbeef", "/x/deadbeef"); /* short hex stays */
    gen_is("/a//b", "/a//b");
    gen_is("/files/a*b", NULL);
    gen_is("/files/[ab]", NULL);
    gen_is("/files/a?b", "/files/a"); /* the query starts at '?' */
    gen_is("relative", NULL);
    gen_is("", NULL);
}
END_TEST

START_TEST(test_name_and_confidence)
{
    char name[128];

    advisor_mapper_rule_name("api.github.com", 443, name, sizeof(name));
    ck_assert_str_eq(name, "allow_api_github_com_443");
    advisor_mapper_rule_name("My-Host.Example", 8080, name, sizeof(name));
    ck_assert_str_eq(name, "allow_my_host_example_8080");
    ck_assert(advisor_mapper_confidence(10, 443, false) > 0.8);
    ck_assert(advisor_mapper_confidence(5, 80, true) < 0.6);
    ck_assert(advisor_mapper_confidence(1, 12345, true) >= 0.1);
    ck_assert(advisor_mapper_confidence(1000, 443, false) <= 0.95);
}
END_TEST

static json_t *rule_of(json_t *prop)
{
    return json_object_get(
        json_object_get(json_array_get(json_object_get(prop, "operations"), 0), "addRule"), "rule");
}

START_TEST(test_l7_from_samples)
{
    const char *methods[] = {"GET", "GET", "POST", "GET", "GET"};
    const char *paths[] = {"/items/123", "/items/456", "/items", "/items/123", "/bad/*"};
    double conf = 0;
    json_t *p = advisor_mapper_proposal("API.example.com", 443, "/usr/bin/curl", 12, false, methods,
                                        paths, 5, NULL, false, &conf);
    json_t *ep;
    json_t *rules;
    char *s;

    ck_assert_ptr_nonnull(p);
    ck_assert(conf > 0.8);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(p, "operations"), 0), "addRule"),
            "ruleName")),
        "allow_api_example_com_443");
    ep = json_array_get(json_object_get(rule_of(p), "endpoints"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(ep, "protocol")), "rest");
    ck_assert_str_eq(json_string_value(json_object_get(ep, "enforcement")), "enforce");
    ck_assert_ptr_null(json_object_get(ep, "access"));
    rules = json_object_get(ep, "rules");
    s = json_dumps(rules, JSON_COMPACT);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"GET\",\"path\":\"/items/*\"}},"
                        "{\"allow\":{\"method\":\"POST\",\"path\":\"/items\"}}]");
    free(s);
    ck_assert(strstr(json_string_value(json_object_get(p, "intent_summary")),
                     "with L7 inspection. Allowed paths: GET /items/*, POST /items") != NULL);
    json_decref(p);
}
END_TEST

/* A later flush adds to the pending chunk's rules; a broad prior rule is
 * never carried over. */
START_TEST(test_union_with_prior)
{
    const char *methods[] = {"DELETE"};
    const char *paths[] = {"/items/77"};
    double conf = 0;
    json_t *prior = json_loads("[{\"allow\":{\"method\":\"GET\",\"path\":\"/items/*\"}},"
                               "{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}},"
                               "{\"allow\":{\"method\":\"DELETE\",\"path\":\"/items/*\"}}]",
                               0, NULL);
    json_t *p = advisor_mapper_proposal("api.example.com", 443, "/usr/bin/curl", 1, false, methods,
                                        paths, 1, prior, false, &conf);
    char *s;

    ck_assert_ptr_nonnull(p);
    s = json_dumps(
        json_object_get(json_array_get(json_object_get(rule_of(p), "endpoints"), 0), "rules"),
        JSON_COMPACT);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"DELETE\",\"path\":\"/items/*\"}},"
                        "{\"allow\":{\"method\":\"GET\",\"path\":\"/items/*\"}}]");
    free(s);
    json_decref(p);
    json_decref(prior);
}
END_TEST

/* The endpoint and its rules (compact JSON) of a proposal from events. */
static char *events_rules(const char *events, const char *prior, json_t **epo)
{
    json_t *ev = json_loads(events, 0, NULL);
    json_t *pr = prior != NULL ? json_loads(prior, 0, NULL) : NULL;
    double conf = 0;
    json_t *p;
    char *s;

    ck_assert_ptr_nonnull(ev);
    p = advisor_mapper_proposal_events("api.example.com", 443, "/usr/bin/gh", ev, pr, false, &conf);
    json_decref(ev);
    json_decref(pr);
    if (p == NULL) {
        return NULL;
    }
    *epo = json_deep_copy(json_array_get(json_object_get(rule_of(p), "endpoints"), 0));
    s = json_dumps(json_object_get(*epo, "rules"), JSON_COMPACT);
    json_decref(p);
    return s;
}

/* A proposal for an endpoint keyed by its path: that protocol, that exact
 * path, enforced. */
static void endpoint_is(const json_t *ep, const char *protocol, const char *path)
{
    ck_assert_str_eq(json_string_value(json_object_get(ep, "protocol")), protocol);
    ck_assert_str_eq(json_string_value(json_object_get(ep, "path")), path);
    ck_assert_str_eq(json_string_value(json_object_get(ep, "enforcement")), "enforce");
}

/* Each event alone (a JSON object's text) proposes nothing. */
static void none_proposed(const char *const *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char buf[512];
        json_t *ep = NULL;
        char *s;
        snprintf(buf, sizeof(buf), "[%s]", bad[i]);
        s = events_rules(buf, NULL, &ep);
        if (s != NULL) {
            ck_abort_msg("event %zu proposed %s", i, s);
        }
        json_decref(ep);
    }
}

/* A GraphQL denial proposes a GraphQL rule on the endpoint's exact path:
 * the operation type, the operation name only when there was one, exactly
 * the fields (sorted, once) - never a method/path rule, never a glob. */
START_TEST(test_graphql_rule)
{
    json_t *ep = NULL;
    char *s = events_rules(
        "[{\"method\":\"POST\",\"path\":\"/graphql\",\"protocol\":\"graphql\",\"graphql\":"
        "{\"operation_type\":\"mutation\",\"fields\":[\"createIssue\",\"addLabel\",\"createIssue\"]"
        "}},"
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"protocol\":\"graphql\",\"graphql\":"
        "{\"operation_type\":\"query\",\"operation_name\":\"Viewer\",\"fields\":[\"viewer\"]}}]",
        NULL, &ep);

    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "[{\"allow\":{\"operation_type\":\"mutation\","
                        "\"fields\":[\"addLabel\",\"createIssue\"]}},"
                        "{\"allow\":{\"operation_type\":\"query\",\"operation_name\":\"Viewer\","
                        "\"fields\":[\"viewer\"]}}]");
    endpoint_is(ep, "graphql", "/graphql");
    ck_assert_ptr_null(strstr(s, "\"method\""));
    free(s);
    json_decref(ep);
}
END_TEST

/* What no GraphQL rule can name proposes nothing - in particular never an
 * L4 rule and never a REST rule for a graphql endpoint: an unreadable
 * request, a persisted query, a glob or a non-Name smuggled in a field or
 * name, a `*` type, an empty field list. */
START_TEST(test_graphql_nothing_to_name)
{
    static const char *const bad[] = {
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"protocol\":\"graphql\"}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"persisted_id\":\"abc\"}}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"operation_type\":\"mutation\","
        "\"fields\":[\"*\"]}}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"operation_type\":\"mutation\","
        "\"fields\":[\"create*\"]}}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"operation_type\":\"mutation\","
        "\"operation_name\":\"{A,B}\",\"fields\":[\"a\"]}}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"operation_type\":\"*\","
        "\"fields\":[\"a\"]}}",
        "{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":{\"operation_type\":\"query\","
        "\"fields\":[]}}",
        "{\"method\":\"POST\",\"path\":\"/graph*\",\"graphql\":{\"operation_type\":\"query\","
        "\"fields\":[\"a\"]}}",
    };
    none_proposed(bad, sizeof(bad) / sizeof(bad[0]));
}
END_TEST

/* A prior chunk's GraphQL rules are kept when exact, dropped when broad. */
START_TEST(test_graphql_prior)
{
    json_t *ep = NULL;
    char *s = events_rules("[{\"method\":\"POST\",\"path\":\"/graphql\",\"graphql\":"
                           "{\"operation_type\":\"mutation\",\"fields\":[\"createIssue\"]}}]",
                           "[{\"allow\":{\"operation_type\":\"query\",\"fields\":[\"viewer\"]}},"
                           "{\"allow\":{\"operation_type\":\"*\",\"fields\":[\"x\"]}},"
                           "{\"allow\":{\"operation_type\":\"mutation\",\"fields\":[\"del*\"]}},"
                           "{\"allow\":{\"operation_type\":\"mutation\"}},"
                           "{\"allow\":{\"method\":\"POST\",\"path\":\"/graphql\"}}]",
                           &ep);

    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s,
                     "[{\"allow\":{\"operation_type\":\"mutation\",\"fields\":[\"createIssue\"]}},"
                     "{\"allow\":{\"operation_type\":\"query\",\"fields\":[\"viewer\"]}}]");
    free(s);
    json_decref(ep);
}
END_TEST

/* A WEBSOCKET_TEXT denial: a WEBSOCKET_TEXT rule on the upgrade's exact
 * path (an ID-like segment is not generalised: the endpoint is that path). */
START_TEST(test_websocket_text)
{
    json_t *ep = NULL;
    char *s = events_rules("[{\"method\":\"WEBSOCKET_TEXT\",\"path\":\"/ws/12345\",\"stage\":"
                           "\"websocket\"}]",
                           NULL, &ep);

    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"WEBSOCKET_TEXT\",\"path\":\"/ws/12345\"}}]");
    endpoint_is(ep, "websocket", "/ws/12345");
    free(s);
    json_decref(ep);
    /* a GraphQL-over-WebSocket operation: its GraphQL rule on that endpoint */
    s = events_rules("[{\"method\":\"WEBSOCKET_TEXT\",\"path\":\"/subs\",\"graphql\":"
                     "{\"operation_type\":\"subscription\",\"fields\":[\"issueAdded\"]}}]",
                     NULL, &ep);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(
        s, "[{\"allow\":{\"operation_type\":\"subscription\",\"fields\":[\"issueAdded\"]}}]");
    ck_assert_str_eq(json_string_value(json_object_get(ep, "protocol")), "websocket");
    free(s);
    json_decref(ep);
}
END_TEST

/* REST groups stay REST: a WEBSOCKET_TEXT prior rule is not carried into
 * one, and the dedup key of a graphql or websocket endpoint names its path. */
START_TEST(test_rest_unchanged_and_keys)
{
    json_t *ep = NULL;
    char key[200];
    char *s =
        events_rules("[{\"method\":\"GET\",\"path\":\"/items/123\"}]",
                     "[{\"allow\":{\"method\":\"WEBSOCKET_TEXT\",\"path\":\"/items\"}}]", &ep);

    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"GET\",\"path\":\"/items/*\"}}]");
    ck_assert_str_eq(json_string_value(json_object_get(ep, "protocol")), "rest");
    ck_assert_ptr_null(json_object_get(ep, "path"));
    free(s);
    json_decref(ep);
    advisor_dedup_key("h", 443, "/b", "rest", NULL, key, sizeof(key));
    ck_assert_str_eq(key, "h|443|/b");
    advisor_dedup_key("h", 443, "/b", "graphql", "/graphql", key, sizeof(key));
    ck_assert_str_eq(key, "h|443|/b|graphql|/graphql");
    advisor_dedup_key("h", 443, "/b", "websocket", "/ws", key, sizeof(key));
    ck_assert_str_eq(key, "h|443|/b|websocket|/ws");
}
END_TEST

START_TEST(test_l4_without_samples)
{
    double conf = 0;
    json_t *p = advisor_mapper_proposal("pypi.org", 443, "/usr/bin/pip", 1, false, NULL, NULL, 0,
                                        NULL, false, &conf);
    json_t *ep;

    ck_assert_ptr_nonnull(p);
    ep = json_array_get(json_object_get(rule_of(p), "endpoints"), 0);
    ck_assert_ptr_null(json_object_get(ep, "protocol"));
    ck_assert_ptr_null(json_object_get(ep, "rules"));
    ck_assert_int_eq(json_integer_value(json_object_get(ep, "port")), 443);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(rule_of(p), "binaries"), 0), "path")),
                     "/usr/bin/pip");
    json_decref(p);
}
END_TEST

START_TEST(test_never_blocked_or_binaryless)
{
    static const char *const hosts[] = {"127.0.0.1", "169.254.169.254", "metadata.google.internal",
                                        "localhost", "0.0.0.0",         "[::1]",
                                        "localhost."};
    double conf;

    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        json_t *p = advisor_mapper_proposal(hosts[i], 80, "/usr/bin/curl", 3, false, NULL, NULL, 0,
                                            NULL, false, &conf);
        ck_assert_msg(p == NULL, "a proposal for %s", hosts[i]);
    }
    /* only the test switch admits 127.0.0.1, and nothing else */
    {
        json_t *p = advisor_mapper_proposal("127.0.0.1", 80, "/usr/bin/curl", 3, false, NULL, NULL,
                                            0, NULL, true, &conf);
        ck_assert_ptr_nonnull(p);
        json_decref(p);
        p = advisor_mapper_proposal("169.254.169.254", 80, "/usr/bin/curl", 3, false, NULL, NULL, 0,
                                    NULL, true, &conf);
        ck_assert_ptr_null(p);
    }
    ck_assert_ptr_null(advisor_mapper_proposal("example.com", 443, "-", 3, false, NULL, NULL, 0,
                                               NULL, false, &conf));
    ck_assert_ptr_null(advisor_mapper_proposal("**.example.com", 443, "/usr/bin/curl", 3, false,
                                               NULL, NULL, 0, NULL, false, &conf));
    ck_assert_ptr_null(advisor_mapper_proposal("example.com", 443, "/usr/bin/*", 3, false, NULL,
                                               NULL, 0, NULL, false, &conf));
    /* a real path with any binary glob metacharacter would be read as a
     * pattern: '{a,b}' names two binaries, '\\' escapes */
    ck_assert_ptr_null(advisor_mapper_proposal("example.com", 443, "/opt/{a,b}/tool", 3, false,
                                               NULL, NULL, 0, NULL, false, &conf));
    ck_assert_ptr_null(advisor_mapper_proposal("example.com", 443, "/opt/a\\b", 3, false, NULL,
                                               NULL, 0, NULL, false, &conf));
    ck_assert_ptr_null(advisor_mapper_proposal("bad/host", 443, "/usr/bin/curl", 3, false, NULL,
                                               NULL, 0, NULL, false, &conf));
    ck_assert_ptr_null(advisor_mapper_proposal("example.com", 0, "/usr/bin/curl", 3, false, NULL,
                                               NULL, 0, NULL, false, &conf));
}
END_TEST

START_TEST(test_ingest_aggregates)
{
    struct advisor a;
    struct advisor_mapper *m;
    struct advisor_view v;
    const char *body =
        "{\"events\":[{\"host\":\"A.example.com\",\"port\":443,\"binary\":\"/usr/bin/curl\","
        "\"stage\":\"forward-l7-deny\",\"method\":\"GET\",\"path\":\"/x/1\"},"
        "{\"host\":\"a.example.com\",\"port\":443,\"binary\":\"/usr/bin/curl\","
        "\"method\":\"GET\",\"path\":\"/x/1\"},"
        "{\"host\":\"\",\"port\":443},{\"port\":99999,\"host\":\"b\"}],\"dropped\":3}";

    memset(&a, 0, sizeof(a));
    m = advisor_mapper_new(&a, 1000, false);
    ck_assert_ptr_nonnull(m);
    ck_assert(pv_ok(advisor_mapper_ingest(m, "sb", body, strlen(body), &v)));
    ck_assert_int_eq(json_integer_value(json_object_get(v.json, "accepted")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(v.json, "dropped")), 2);
    advisor_view_clear(&v);
    ck_assert(!pv_ok(advisor_mapper_ingest(m, "sb", "{\"events\":{}}", 13, &v)));
    ck_assert_int_eq(v.refusal, ADVISOR_REFUSED_BAD_REQUEST);
    advisor_view_clear(&v);
    ck_assert(!pv_ok(advisor_mapper_ingest(m, "sb", "[", 1, &v)));
    ck_assert_int_eq(v.refusal, ADVISOR_REFUSED_BAD_REQUEST);
    advisor_view_clear(&v);
    advisor_mapper_free(m);
}
END_TEST

/* A denial whose host holds a Unicode format character is dropped; one
 * in the path only loses the sample (issue #22). */
START_TEST(test_ingest_drops_format_chars)
{
    struct advisor a;
    struct advisor_mapper *m;
    struct advisor_view v;
    const char *body = "{\"events\":[{\"host\":\"a\\u202e.example.com\",\"port\":443,\"binary\":"
                       "\"/usr/bin/curl\"},{\"host\":\"a.example.com\",\"port\":443,\"binary\":"
                       "\"/usr/bin/curl\",\"method\":\"GET\",\"path\":\"/x\\u200b\"}]}";

    memset(&a, 0, sizeof(a));
    m = advisor_mapper_new(&a, 1000, false);
    ck_assert_ptr_nonnull(m);
    ck_assert(pv_ok(advisor_mapper_ingest(m, "sb", body, strlen(body), &v)));
    ck_assert_int_eq(json_integer_value(json_object_get(v.json, "accepted")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(v.json, "dropped")), 1);
    advisor_view_clear(&v);
    advisor_mapper_free(m);
}
END_TEST

/* A call an mcp or json-rpc endpoint refused proposes a call rule on that
 * endpoint's exact path: its method and, for an MCP tools/call, its tool,
 * each once and sorted - never a path rule, never a glob; a name with a
 * glob metacharacter, or a tool on json-rpc, proposes nothing. */
START_TEST(test_rpc_rule)
{
    json_t *ep = NULL;
    char *s = events_rules(
        "[{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/call\",\"tool\":\"create_issue\"}},"
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/call\",\"tool\":\"drop_*\"}},"
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"initialize\"}},"
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/call\",\"tool\":\"create_issue\"}}]",
        NULL, &ep);

    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"initialize\"}},"
                        "{\"allow\":{\"method\":\"tools/call\",\"tool\":\"create_issue\"}}]");
    endpoint_is(ep, "mcp", "/mcp");
    free(s);
    json_decref(ep);
    ep = NULL;
    s = events_rules("[{\"method\":\"POST\",\"path\":\"/rpc\",\"protocol\":\"json-rpc\","
                     "\"rpc\":{\"kind\":\"request\",\"method\":\"sum\"}},"
                     "{\"method\":\"POST\",\"path\":\"/rpc\",\"protocol\":\"json-rpc\","
                     "\"rpc\":{\"kind\":\"request\",\"method\":\"sub[tract]\"}}]",
                     NULL, &ep);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "[{\"allow\":{\"method\":\"sum\"}}]");
    endpoint_is(ep, "json-rpc", "/rpc");
    free(s);
    json_decref(ep);
}
END_TEST

/* Calls no rule can name exactly propose nothing - never an L4 rule and
 * never a REST rule for the endpoint's path. */
START_TEST(test_rpc_nothing_to_name)
{
    static const char *const bad[] = {
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/*\"}}",
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/call\",\"tool\":\"{a,b}\"}}",
        "{\"method\":\"POST\",\"path\":\"/rpc\",\"protocol\":\"json-rpc\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"sum\",\"tool\":\"x\"}}",
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"initialize\",\"tool\":\"x\"}}",
        "{\"method\":\"POST\",\"path\":\"/mc*\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"initialize\"}}",
        "{\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"\"}}",
    };
    none_proposed(bad, sizeof(bad) / sizeof(bad[0]));
}
END_TEST

/* Ingest: a refused MCP call is a group of its own (its call rule), while
 * a denial on a json-rpc endpoint without a call the proxy read (an
 * unreadable body) is no group: a POST rule on the endpoint's path would
 * open it uninspected (docs/semantics.md#rpc). */
START_TEST(test_ingest_skips_rpc_calls)
{
    struct advisor a;
    struct advisor_mapper *m;
    struct advisor_view v;
    const char *body =
        "{\"events\":[{\"host\":\"mcp.example.com\",\"port\":443,\"binary\":\"/usr/bin/node\","
        "\"method\":\"POST\",\"path\":\"/mcp\",\"protocol\":\"mcp\",\"rpc\":{\"kind\":"
        "\"request\",\"method\":\"tools/call\",\"tool\":\"drop_db\"}},"
        "{\"host\":\"rpc.example.com\",\"port\":443,\"binary\":\"/usr/bin/node\","
        "\"method\":\"POST\",\"path\":\"/\",\"protocol\":\"json-rpc\"}]}";

    memset(&a, 0, sizeof(a));
    m = advisor_mapper_new(&a, 1000, false);
    ck_assert_ptr_nonnull(m);
    ck_assert(pv_ok(advisor_mapper_ingest(m, "sb", body, strlen(body), &v)));
    ck_assert_int_eq(json_integer_value(json_object_get(v.json, "accepted")), 1);
    advisor_view_clear(&v);
    advisor_mapper_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("advisor_mapper");
    TCase *t = tcase_create("mapper");
    SRunner *r;
    int failed;

    tcase_add_test(t, test_generalise);
    tcase_add_test(t, test_ingest_skips_rpc_calls);
    tcase_add_test(t, test_rpc_rule);
    tcase_add_test(t, test_rpc_nothing_to_name);
    tcase_add_test(t, test_name_and_confidence);
    tcase_add_test(t, test_l7_from_samples);
    tcase_add_test(t, test_union_with_prior);
    tcase_add_test(t, test_graphql_rule);
    tcase_add_test(t, test_graphql_nothing_to_name);
    tcase_add_test(t, test_graphql_prior);
    tcase_add_test(t, test_websocket_text);
    tcase_add_test(t, test_rest_unchanged_and_keys);
    tcase_add_test(t, test_l4_without_samples);
    tcase_add_test(t, test_never_blocked_or_binaryless);
    tcase_add_test(t, test_ingest_aggregates);
    tcase_add_test(t, test_ingest_drops_format_chars);
    suite_add_tcase(s, t);
    r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
