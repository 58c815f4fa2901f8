/* SPDX-License-Identifier: Apache-2.0 */
/* check_server_discover.c - policy-driven tool discovery and this service's own API
 *
 * Rows pair a server URL and an operation with the decision discovery must
 * reach under one fixed policy, and the representative request it must build
 * (host, port, target). Wrong URL parsing (ports, base paths, variables,
 * user info), wrong parameter filling or a wrong "reachable" rule fails a
 * row. Further tests cover the tool list (names, input_schema, $ref
 * inlining with cycles), malformed documents and GET /openapi.json's
 * document.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "server/server.h"

static const char policy_yaml[] = "version: 1\n"
                                  "network_policies:\n"
                                  "  api:\n"
                                  "    name: api\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        rules:\n"
                                  "          - allow: {method: GET, path: \"/v1/items/*\"}\n"
                                  "          - allow: {method: POST, path: /v1/items}\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n"
                                  "  plain:\n"
                                  "    name: plain\n"
                                  "    endpoints:\n"
                                  "      - host: plain.example.com\n"
                                  "        port: 8080\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n";

static struct model_policy *policy(void)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        model_policy_load("policy", policy_yaml, strlen(policy_yaml), MODEL_FMT_YAML, d);
    ck_assert_msg(p != NULL, "%s", model_diags_count(d) ? model_diags_line(d, 0) : "?");
    model_diags_free(d);
    return p;
}

struct row {
    const char *server; /* JSON of one servers[] entry */
    const char *method;
    const char *path;
    bool reachable;
    const char *target; /* expected representative target, or NULL */
    int port;           /* expected port, or 0 */
    const char *reason; /* expected reason substring */
};

static const struct row rows[] = {
    {"{\"url\": \"https://api.example.com\"}", "get", "/v1/items/{id}", true, "/v1/items/x1", 443,
     "allowed"},
    {"{\"url\": \"https://api.example.com/v1\"}", "get", "/items/{id}", true, "/v1/items/x1", 443,
     "allowed"},
    {"{\"url\": \"https://api.example.com/v1/\"}", "get", "/items/{id}", true, "/v1/items/x1", 443,
     "allowed"},
    {"{\"url\": \"HTTPS://API.EXAMPLE.COM:443\"}", "post", "/v1/items", true, "/v1/items", 443,
     "allowed"},
    {"{\"url\": \"https://api.example.com\"}", "get", "/v1/items/{id}.json", true,
     "/v1/items/x1.json", 443, "allowed"},
    {"{\"url\": \"{scheme}://api.example.com\", \"variables\": {\"scheme\": {\"default\": "
     "\"https\"}}}",
     "get", "/v1/items/{id}", true, "/v1/items/x1", 443, "allowed"},
    {"{\"url\": \"http://plain.example.com:8080\"}", "delete", "/anything/{x}", true,
     "/anything/x1", 8080, "allowed"},
    /* negative rows */
    {"{\"url\": \"https://api.example.com\"}", "delete", "/v1/items/{id}", false, "/v1/items/x1",
     443, "l7_not_permitted"},
    {"{\"url\": \"https://api.example.com\"}", "get", "/v1/items/{a}/{b}", false, "/v1/items/x1/x1",
     443, "l7_not_permitted"},
    {"{\"url\": \"https://api.example.com\"}", "get", "/v2/items/{id}", false, "/v2/items/x1", 443,
     "l7_not_permitted"},
    {"{\"url\": \"http://api.example.com\"}", "get", "/v1/items/{id}", false, "/v1/items/x1", 80,
     "no_endpoint"},
    {"{\"url\": \"https://api.example.com:8443\"}", "get", "/v1/items/{id}", false, "/v1/items/x1",
     8443, "no_endpoint"},
    {"{\"url\": \"https://other.example.com\"}", "get", "/v1/items/{id}", false, "/v1/items/x1",
     443, "no_endpoint"},
    {"{\"url\": \"/api\"}", "get", "/v1/items/{id}", false, NULL, 0, "relative server url"},
    {"{\"url\": \"ftp://api.example.com\"}", "get", "/v1/items/{id}", false, NULL, 0,
     "unsupported url scheme"},
    {"{\"url\": \"https://u:p@api.example.com\"}", "get", "/v1/items/{id}", false, NULL, 0,
     "user info"},
    {"{\"url\": \"https://api.example.com:99999\"}", "get", "/v1/items/{id}", false, NULL, 0,
     "invalid port"},
    {"{\"url\": \"https://api.example.com:0\"}", "get", "/v1/items/{id}", false, NULL, 0,
     "invalid port"},
    {"{\"url\": \"https://:443\"}", "get", "/v1/items/{id}", false, NULL, 0, "host"},
    {"{\"url\": \"https://{host}\"}", "get", "/v1/items/{id}", false, NULL, 0, "without a default"},
    {"{\"url\": \"https://[::1\"}", "get", "/v1/items/{id}", false, NULL, 0, "IPv6"},
    {"{}", "get", "/v1/items/{id}", false, NULL, 0, "without a url"},
};

static json_t *doc_for(const char *server, const char *method, const char *path)
{
    json_error_t e;
    json_t *srv = json_loads(server, 0, &e);
    json_t *doc;

    ck_assert_msg(srv != NULL, "bad row JSON: %s", e.text);
    doc =
        json_pack("{s:s,s:{s:s,s:s},s:[o],s:{s:{s:{s:s}}}}", "openapi", "3.0.3", "info", "title",
                  "t", "version", "1", "servers", srv, "paths", path, method, "operationId", "op");
    ck_assert_ptr_nonnull(doc);
    return doc;
}

START_TEST(test_discover_table)
{
    const struct row *r = &rows[_i];
    struct model_policy *p = policy();
    json_t *doc = doc_for(r->server, r->method, r->path);
    char err[256] = "";
    json_t *out =
        server_discover(doc, p, (const char *const[]){"/usr/bin/curl"}, 1, false, err, sizeof(err));
    const json_t *op;
    const json_t *chk;

    ck_assert_msg(out != NULL, "row %d: %s", _i, err);
    ck_assert_int_eq(json_integer_value(json_object_get(out, "operations_total")), 1);
    op = json_array_get(json_object_get(out, "operations"), 0);
    ck_assert_msg(json_is_true(json_object_get(op, "reachable")) == r->reachable,
                  "row %d: reachable", _i);
    chk = json_array_get(json_object_get(op, "checks"), 0);
    ck_assert_ptr_nonnull(chk);
    ck_assert_msg(strstr(json_string_value(json_object_get(chk, "reason")), r->reason) != NULL,
                  "row %d: reason %s, want %s", _i,
                  json_string_value(json_object_get(chk, "reason")), r->reason);
    if (r->target != NULL) {
        ck_assert_str_eq(json_string_value(json_object_get(chk, "target")), r->target);
        ck_assert_int_eq(json_integer_value(json_object_get(chk, "port")), r->port);
    }
    /* The subset and the tools list hold exactly the reachable operation. */
    ck_assert_uint_eq(json_array_size(json_object_get(out, "tools")), r->reachable ? 1 : 0);
    ck_assert_uint_eq(json_object_size(json_object_get(json_object_get(out, "openapi"), "paths")),
                      r->reachable ? 1 : 0);
    ck_assert_int_eq(json_integer_value(json_object_get(out, "operations_reachable")),
                     r->reachable ? 1 : 0);
    json_decref(out);
    json_decref(doc);
    model_policy_free(p);
}
END_TEST

/* The identity matters: another binary reaches nothing. Several servers:
 * reachable through one, and the subset names only that server. */
START_TEST(test_discover_binary_and_servers)
{
    struct model_policy *p = policy();
    json_t *doc =
        json_pack("{s:s,s:[{s:s},{s:s}],s:{s:{s:{s:s},s:{s:s}}}}", "openapi", "3.1.0", "servers",
                  "url", "https://other.example.com", "url", "https://api.example.com", "paths",
                  "/v1/items", "post", "summary", "Create", "put", "summary", "Replace");
    char err[256];
    json_t *out =
        server_discover(doc, p, (const char *const[]){"/usr/bin/wget"}, 1, false, err, sizeof(err));
    const json_t *paths;

    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(json_integer_value(json_object_get(out, "operations_reachable")), 0);
    json_decref(out);
    out =
        server_discover(doc, p, (const char *const[]){"/usr/bin/curl"}, 1, false, err, sizeof(err));
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(json_integer_value(json_object_get(out, "operations_reachable")), 1);
    paths = json_object_get(json_object_get(out, "openapi"), "paths");
    ck_assert_ptr_null(json_object_get(json_object_get(paths, "/v1/items"), "put"));
    {
        const json_t *servers = json_object_get(
            json_object_get(json_object_get(paths, "/v1/items"), "post"), "servers");
        ck_assert_uint_eq(json_array_size(servers), 1);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(servers, 0), "url")),
                         "https://api.example.com");
    }
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(out, "tools"), 0), "description")),
                     "Create");
    {
        /* how to call it: the method, the template and only the allowing server */
        const json_t *http =
            json_object_get(json_array_get(json_object_get(out, "tools"), 0), "http");
        ck_assert_str_eq(json_string_value(json_object_get(http, "method")), "POST");
        ck_assert_str_eq(json_string_value(json_object_get(http, "path")), "/v1/items");
        ck_assert_uint_eq(json_array_size(json_object_get(http, "servers")), 1);
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(http, "servers"), 0)),
                         "https://api.example.com");
    }
    json_decref(out);
    /* wget run by an allowed ancestor (curl) decides as the proxy would: allowed */
    out = server_discover(doc, p, (const char *const[]){"/usr/bin/wget", "/usr/bin/curl"}, 2, false,
                          err, sizeof(err));
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(json_integer_value(json_object_get(out, "operations_reachable")), 1);
    json_decref(out);
    json_decref(doc);
    model_policy_free(p);
}
END_TEST

static const struct {
    const char *doc;
    const char *err;
} bad_docs[] = {
    {"[]", "must be an OpenAPI 3 object"},
    {"{\"swagger\": \"2.0\", \"paths\": {}}", "not an OpenAPI 3 document"},
    {"{\"openapi\": 3, \"paths\": {}}", "not an OpenAPI 3 document"},
    {"{\"openapi\": \"3.0.0\"}", "paths: must be an object"},
    {"{\"openapi\": \"3.0.0\", \"paths\": []}", "paths: must be an object"},
    {"{\"openapi\": \"3.0.0\", \"paths\": {\"x\": {}}}", "does not start with '/'"},
    {"{\"openapi\": \"3.0.0\", \"paths\": {\"/x\": 1}}", "must be an object"},
    {"{\"openapi\": \"3.0.0\", \"paths\": {\"/x\": {\"get\": []}}}", ".get: must be an object"},
};

START_TEST(test_discover_bad_docs)
{
    struct model_policy *p = policy();
    json_t *doc = json_loads(bad_docs[_i].doc, 0, NULL);
    char err[256] = "";
    json_t *out;

    ck_assert_ptr_nonnull(doc);
    out =
        server_discover(doc, p, (const char *const[]){"/usr/bin/curl"}, 1, false, err, sizeof(err));
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err, bad_docs[_i].err) != NULL, "row %d: %s", _i, err);
    ck_assert_ptr_null(server_openapi_tools(doc));
    json_decref(doc);
    model_policy_free(p);
}
END_TEST

/* Tool names, input schemas, parameters and $ref inlining. */
START_TEST(test_tools)
{
    static const char text[] =
        "{\"openapi\": \"3.0.0\", \"paths\": {"
        " \"/repos/{owner}/{repo}\": {"
        "  \"parameters\": [{\"name\": \"owner\", \"in\": \"path\", \"schema\": {\"type\": "
        "\"string\"}},"
        "                  {\"$ref\": \"#/components/parameters/Repo\"}],"
        "  \"get\": {\"operationId\": \"repos/get thing!\", \"description\": \"Long\","
        "           \"parameters\": [{\"name\": \"owner\", \"in\": \"path\", \"description\": "
        "\"who\", \"schema\": {\"type\": \"integer\"}}]},"
        "  \"patch\": {\"requestBody\": {\"required\": true, \"content\": {\"text/plain\": "
        "{\"schema\": {\"$ref\": \"#/components/schemas/Node\"}}}}}},"
        " \"/a\": {\"get\": {\"operationId\": \"repos/get thing!\"}}},"
        " \"components\": {\"parameters\": {\"Repo\": {\"name\": \"repo\", \"in\": \"path\"}},"
        "  \"schemas\": {\"Node\": {\"type\": \"object\", \"properties\": {\"next\": {\"$ref\": "
        "\"#/components/schemas/Node\"}}}}}}";
    json_t *doc = json_loads(text, 0, NULL);
    json_t *tools;
    const json_t *t0;
    const json_t *t1;
    const json_t *t2;
    const json_t *props;
    char *dump;

    ck_assert_ptr_nonnull(doc);
    tools = server_openapi_tools(doc);
    ck_assert_ptr_nonnull(tools);
    ck_assert_uint_eq(json_array_size(tools), 3);
    t0 = json_array_get(tools, 0);
    t1 = json_array_get(tools, 1);
    t2 = json_array_get(tools, 2);
    ck_assert_str_eq(json_string_value(json_object_get(t0, "name")), "repos_get_thing");
    ck_assert_str_eq(json_string_value(json_object_get(t0, "description")), "Long");
    props = json_object_get(json_object_get(t0, "input_schema"), "properties");
    /* The operation's owner overrides the path item's. */
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(props, "owner"), "type")),
                     "integer");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(props, "owner"), "description")), "who");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(props, "repo"), "type")),
                     "string");
    dump =
        json_dumps(json_object_get(json_object_get(t0, "input_schema"), "required"), JSON_COMPACT);
    ck_assert_str_eq(dump, "[\"repo\",\"owner\"]");
    free(dump);
    ck_assert_str_eq(json_string_value(json_object_get(t1, "name")), "patch_repos_owner_repo");
    ck_assert_str_eq(json_string_value(json_object_get(t1, "description")),
                     "PATCH /repos/{owner}/{repo}");
    props = json_object_get(json_object_get(t1, "input_schema"), "properties");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(props, "body"), "type")),
                     "object");
    dump =
        json_dumps(json_object_get(json_object_get(t1, "input_schema"), "required"), JSON_COMPACT);
    ck_assert_str_eq(dump, "[\"owner\",\"repo\",\"body\"]");
    free(dump);
    /* Duplicate names get a suffix. */
    ck_assert_str_eq(json_string_value(json_object_get(t2, "name")), "repos_get_thing_2");
    /* The source document is untouched (no description leaked into it). */
    ck_assert_ptr_null(json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(json_object_get(doc, "paths"),
                                                           "/repos/{owner}/{repo}"),
                                           "parameters"),
                           0),
            "schema"),
        "description"));
    json_decref(tools);
    json_decref(doc);
}
END_TEST

/* GET /openapi.json: valid, OpenAPI 3, one path per route of the table. */
START_TEST(test_own_api)
{
    json_t *api = server_api_openapi();
    json_t *tools;
    const json_t *paths;

    ck_assert_ptr_nonnull(api);
    ck_assert_str_eq(json_string_value(json_object_get(api, "openapi")), "3.0.3");
    paths = json_object_get(api, "paths");
    for (int r = 0; r < SERVER_R_UNKNOWN; r++) {
        ck_assert_msg(json_object_get(paths, server_route_path((enum server_route_id)r)) != NULL,
                      "%s is not described", server_route_path((enum server_route_id)r));
    }
    ck_assert_uint_eq(json_object_size(paths), SERVER_R_UNKNOWN);
    tools = server_openapi_tools(api);
    ck_assert_ptr_nonnull(tools);
    ck_assert_uint_eq(json_array_size(tools), SERVER_R_UNKNOWN);
    json_decref(tools);
    json_decref(api);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_discover");
    TCase *tc = tcase_create("discover");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_discover_table, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_discover_binary_and_servers);
    tcase_add_loop_test(tc, test_discover_bad_docs, 0, (int)PV_ARRAY_LEN(bad_docs));
    tcase_add_test(tc, test_tools);
    tcase_add_test(tc, test_own_api);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
