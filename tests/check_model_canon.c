/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_canon.c - canonical JSON/YAML emitters and the policy hash
 *
 * Round trips (YAML -> YAML, YAML -> JSON -> YAML) must reproduce the same
 * canonical text, and the hash must not depend on spelling (key order,
 * port vs ports: [p], flow vs block style, quoting, JSON vs YAML) while any
 * change of meaning changes it. Round trips use the parse stage (reader +
 * schema) so that every key of the schema can be exercised regardless of
 * semantic validity; the full pipeline is used for copy and new_empty.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

static struct model_policy *parse(const char *text, enum model_format fmt)
{
    struct model_diags *d = model_diags_new();
    size_t len = strlen(text);
    struct model_node *root;
    struct model_policy *p = NULL;

    if (fmt == MODEL_FMT_AUTO) {
        fmt = text[strspn(text, " \t\r\n")] == '{' ? MODEL_FMT_JSON : MODEL_FMT_YAML;
    }
    root = fmt == MODEL_FMT_JSON ? model_json_read("c", text, len, d)
                                 : model_yaml_read("c", text, len, d);
    if (root != NULL) {
        p = model_schema_policy("c", root, d);
        model_node_free(root);
    }
    ck_assert_msg(p != NULL, "parse failed: %s\n%s",
                  model_diags_count(d) ? model_diags_line(d, 0) : "?", text);
    model_diags_free(d);
    return p;
}

static void hash_of(const struct model_policy *p, char out[65])
{
    ck_assert(pv_ok(model_policy_sha256(p, out)));
    ck_assert_uint_eq(strlen(out), 64);
    ck_assert_uint_eq(strspn(out, "0123456789abcdef"), 64);
}

static const char full_yaml[] =
    "network_policies:\n"
    "  zeta:\n"
    "    endpoints:\n"
    "      - host: z.example.com\n"
    "        port: 80\n"
    "    binaries: [{path: /usr/bin/z}]\n"
    "  full:\n"
    "    name: full-rule\n"
    "    binaries:\n"
    "      - path: /usr/bin/curl\n"
    "        harness: true\n"
    "      - {path: \"/sandbox/**/python3*\"}\n"
    "    endpoints:\n"
    "      - host: api.example.com\n"
    "        path: /v1/**\n"
    "        ports: [8443, 443, 443]\n"
    "        protocol: rest\n"
    "        tls: terminate\n"
    "        enforcement: enforce\n"
    "        rules:\n"
    "          - allow:\n"
    "              method: GET\n"
    "              path: /v1/items/*\n"
    "              query:\n"
    "                tag: \"v1-*\"\n"
    "                kind: {glob: \"a*\"}\n"
    "                env: {any: [prod, \"stage-*\"]}\n"
    "        deny_rules:\n"
    "          - method: POST\n"
    "            path: /v1/admin/**\n"
    "            query:\n"
    "              force: {any: [\"true\", \"123\", \"\", \"null\", \"~\", \"*x\", \"- a\"]}\n"
    "        allowed_ips: [10.0.0.0/8, 192.168.1.5]\n"
    "        allow_encoded_slash: true\n"
    "        websocket_credential_rewrite: true\n"
    "        request_body_credential_rewrite: true\n"
    "        allow_uninspected_credentials: true\n"
    "        credential_signing: sigv4\n"
    "        signing_service: s3\n"
    "        signing_region: us-east-1\n"
    "        credential_binding: {provider: my-provider}\n"
    "        target_sandbox: sb-1\n"
    "        advisor_proposed: true\n"
    "      - host: gql.example.com\n"
    "        port: 443\n"
    "        protocol: graphql\n"
    "        access: read-only\n"
    "        persisted_queries: allow_registered\n"
    "        graphql_persisted_queries:\n"
    "          zz: {operation_type: query}\n"
    "          abc123: {operation_type: query, operation_name: GetViewer, fields: [viewer]}\n"
    "        graphql_max_body_bytes: 131072\n"
    "        rules:\n"
    "          - allow: {operation_type: mutation, operation_name: \"Issue*\", "
    "fields: [createIssue]}\n"
    "        deny_rules:\n"
    "          - {operation_type: mutation, fields: [deleteRepository]}\n"
    "      - host: db.example.com\n"
    "        port: 5432\n"
    "        protocol: sql\n"
    "        rules:\n"
    "          - allow: {command: SELECT}\n"
    "      - host: rpc.example.com\n"
    "        port: 8080\n"
    "        protocol: json-rpc\n"
    "        json_rpc: {}\n"
    "        rules: [{allow: {method: eth_call}}]\n"
    "      - host: mcp.example.com\n"
    "        port: 443\n"
    "        protocol: mcp\n"
    "        mcp: {max_body_bytes: 8192, strict_tool_names: true, "
    "allow_all_known_mcp_methods: false}\n"
    "        rules:\n"
    "          - allow: {method: tools/call, tool: \"search*\", "
    "params: {q: {nested: [1, \"two\", true, null, 1.5, 2.0, \"3\"], e: {}, l: []}}}\n"
    "version: 1\n"
    "process:\n"
    "  run_as_group: \"1000\"\n"
    "  run_as_user: sandbox\n"
    "landlock:\n"
    "  compatibility: best_effort\n"
    "filesystem_policy:\n"
    "  read_write: [/tmp]\n"
    "  include_workdir: true\n"
    "  read_only: [/usr, /lib]\n"
    "network_middlewares:\n"
    "  audit:\n"
    "    order: 1\n"
    "    middleware: logger\n"
    "    config: {level: info, ratio: 0.25, on: \"yes\"}\n";

/* Every key of the schema appears in the canonical output. */
START_TEST(test_full_keys_emitted)
{
    static const char *const keys[] = {
        "version",
        "filesystem_policy",
        "include_workdir",
        "read_only",
        "read_write",
        "landlock",
        "compatibility",
        "process",
        "run_as_user",
        "run_as_group",
        "network_policies",
        "name",
        "endpoints",
        "binaries",
        "host",
        "path",
        "ports",
        "port",
        "protocol",
        "tls",
        "enforcement",
        "access",
        "rules",
        "allow",
        "method",
        "query",
        "glob",
        "any",
        "deny_rules",
        "allowed_ips",
        "allow_encoded_slash",
        "websocket_credential_rewrite",
        "request_body_credential_rewrite",
        "allow_uninspected_credentials",
        "credential_signing",
        "signing_service",
        "signing_region",
        "credential_binding",
        "provider",
        "target_sandbox",
        "advisor_proposed",
        "persisted_queries",
        "graphql_persisted_queries",
        "operation_type",
        "operation_name",
        "fields",
        "graphql_max_body_bytes",
        "command",
        "json_rpc",
        "mcp",
        "max_body_bytes",
        "strict_tool_names",
        "tool",
        "params",
        "network_middlewares",
    };
    struct model_policy *p = parse(full_yaml, MODEL_FMT_YAML);
    size_t ylen = 0, jlen = 0;
    char *y = model_policy_to_yaml(p, &ylen);
    char *j = model_policy_to_json(p, &jlen);

    ck_assert_ptr_nonnull(y);
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_eq(ylen, strlen(y));
    ck_assert_uint_eq(jlen, strlen(j));
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        char want[64];
        (void)snprintf(want, sizeof(want), "%s:", keys[i]);
        ck_assert_msg(strstr(y, want) != NULL, "YAML lacks %s\n%s", keys[i], y);
        (void)snprintf(want, sizeof(want), "\"%s\":", keys[i]);
        ck_assert_msg(strstr(j, want) != NULL, "JSON lacks %s", keys[i]);
    }
    /* never written: harness; false booleans */
    ck_assert_ptr_null(strstr(y, "harness"));
    ck_assert_ptr_null(strstr(y, "allow_all_known_mcp_methods"));
    ck_assert_ptr_null(strstr(j, "harness"));
    /* schema order at the top, rules by key */
    ck_assert_ptr_eq(strstr(y, "version: 1\nfilesystem_policy:\n"), y);
    ck_assert(strstr(y, "\nlandlock:") < strstr(y, "\nprocess:"));
    ck_assert(strstr(y, "\nprocess:") < strstr(y, "\nnetwork_policies:"));
    ck_assert(strstr(y, "\nnetwork_policies:") < strstr(y, "\nnetwork_middlewares:"));
    ck_assert(strstr(y, "  full:") < strstr(y, "  zeta:"));
    /* ports sorted, de-duplicated; one port written as port */
    ck_assert_ptr_nonnull(strstr(y, "ports:\n      - 443\n      - 8443\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"port\": 443"));
    /* strings that look like other types are quoted */
    ck_assert_ptr_nonnull(strstr(y, "- 'true'\n"));
    ck_assert_ptr_nonnull(strstr(y, "- '123'\n"));
    ck_assert_ptr_nonnull(strstr(y, "- ''\n"));
    ck_assert_ptr_nonnull(strstr(y, "- 'null'\n"));
    ck_assert_ptr_nonnull(strstr(y, "- '~'\n"));
    ck_assert_ptr_nonnull(strstr(y, "run_as_group: '1000'\n"));
    ck_assert_ptr_nonnull(strstr(y, "ratio: 0.25\n"));
    ck_assert_ptr_nonnull(strstr(y, "- 2.0\n"));
    ck_assert_ptr_nonnull(strstr(y, "'on': 'yes'\n"));
    /* JSON output ends with a newline and is indented */
    ck_assert_int_eq(j[jlen - 1], '\n');
    ck_assert_ptr_eq(strstr(j, "{\n  \""), j);
    free(y);
    free(j);
    model_policy_free(p);
}
END_TEST

/* YAML -> YAML and YAML -> JSON -> YAML give the same text and hash. */
START_TEST(test_round_trips)
{
    struct model_policy *p = parse(full_yaml, MODEL_FMT_YAML);
    char *y1 = model_policy_to_yaml(p, NULL);
    char *j1 = model_policy_to_json(p, NULL);
    struct model_policy *py = parse(y1, MODEL_FMT_YAML);
    struct model_policy *pj = parse(j1, MODEL_FMT_JSON);
    char *y2 = model_policy_to_yaml(py, NULL);
    char *y3 = model_policy_to_yaml(pj, NULL);
    char *j2 = model_policy_to_json(pj, NULL);
    char h1[65], h2[65], h3[65];

    ck_assert_str_eq(y1, y2);
    ck_assert_str_eq(y1, y3);
    ck_assert_str_eq(j1, j2);
    hash_of(p, h1);
    hash_of(py, h2);
    hash_of(pj, h3);
    ck_assert_str_eq(h1, h2);
    ck_assert_str_eq(h1, h3);
    /* types survive: the quoted "123" is still a string, 1.5 a real */
    ck_assert_ptr_nonnull(strstr(j2, "\"123\""));
    ck_assert_ptr_nonnull(strstr(j2, "1.5"));
    ck_assert_ptr_nonnull(strstr(j2, "\"3\""));
    free(y1);
    free(y2);
    free(y3);
    free(j1);
    free(j2);
    model_policy_free(p);
    model_policy_free(py);
    model_policy_free(pj);
}
END_TEST

struct hash_case {
    const char *a;
    const char *b;
    bool same;
};

#define HEAD "version: 1\nnetwork_policies:\n  r:\n    binaries: [{path: /usr/bin/curl}]\n"

static const struct hash_case hash_cases[] = {
    /* equivalent spellings */
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     HEAD "    endpoints:\n      - host: a.com\n        ports: [443]\n", true},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     "network_policies:\n  r:\n    endpoints: [{port: 443, host: a.com}]\n"
     "    binaries:\n      - path: /usr/bin/curl\nversion: 1\n",
     true},
    {HEAD "    endpoints:\n      - host: a.com\n        ports: [80, 443]\n",
     HEAD "    endpoints:\n      - {ports: [443, 80, 443], host: 'a.com'}\n", true},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     "{\"network_policies\": {\"r\": {\"endpoints\": [{\"host\": \"a.com\", \"ports\": [443]}],"
     " \"binaries\": [{\"path\": \"/usr/bin/curl\", \"harness\": true}]}}, \"version\": 1}",
     true},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n        tls: \"\"\n"
          "        allow_encoded_slash: false\n        advisor_proposed: false\n"
          "        rules: []\n        allowed_ips: []\n",
     HEAD "    endpoints:\n      - host: a.com\n        port: 443\n", true},
    {"version: 1\nfilesystem_policy: {include_workdir: false}\nprocess: {}\n", "version: 1\n",
     true},
    {"version: 1\nnetwork_middlewares: {m: {b: 1, a: [x, {d: 2, c: 3}]}}\n",
     "{\"version\": 1, \"network_middlewares\": {\"m\": {\"a\": [\"x\", {\"c\": 3, \"d\": 2}], "
     "\"b\": 1}}}",
     true},
    /* meaning changes the hash */
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     HEAD "    endpoints:\n      - host: a.com\n        port: 444\n", false},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     HEAD "    endpoints:\n      - host: a.com\n        ports: [443, 444]\n", false},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     HEAD "    endpoints:\n      - host: a.com\n        port: 443\n"
          "        advisor_proposed: true\n",
     false},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n",
     "version: 1\nnetwork_policies:\n  s:\n    binaries: [{path: /usr/bin/curl}]\n"
     "    endpoints:\n      - host: a.com\n        port: 443\n",
     false},
    {HEAD "    endpoints:\n      - host: a.com\n        port: 443\n        access: full\n",
     HEAD "    endpoints:\n      - host: a.com\n        port: 443\n        rules: "
          "[{allow: {method: '*', path: '**'}}]\n",
     false},
    {"version: 1\n", "version: 2\n", false},
    {"version: 1\nprocess: {run_as_user: '1000'}\n", "version: 1\nprocess: {run_as_user: '1001'}\n",
     false},
};

START_TEST(test_hash_spellings)
{
    const struct hash_case *c = &hash_cases[_i];
    struct model_policy *a = parse(c->a, MODEL_FMT_AUTO);
    struct model_policy *b = parse(c->b, MODEL_FMT_AUTO);
    char ha[65], hb[65];

    hash_of(a, ha);
    hash_of(b, hb);
    if (c->same) {
        ck_assert_msg(strcmp(ha, hb) == 0, "row %d differs", _i);
    } else {
        ck_assert_msg(strcmp(ha, hb) != 0, "row %d collides", _i);
    }
    model_policy_free(a);
    model_policy_free(b);
}
END_TEST

/* The hash is the SHA-256 of the compact sorted JSON: pin one value. */
START_TEST(test_hash_known)
{
    struct model_policy *p = parse("version: 1\n", MODEL_FMT_YAML);
    char h[65];

    hash_of(p, h);
    /* printf '{"version":1}' | sha256sum */
    ck_assert_str_eq(h, "2430f1a2ad2982d0067885488a4c89e21ad1d7c83b115ba8f1b20acc88dfaea8");
    model_policy_free(p);
}
END_TEST

/* Canonical YAML of a policy that went through the full pipeline reloads. */
START_TEST(test_copy_and_empty)
{
    static const char doc[] = "version: 1\n"
                              "network_policies:\n"
                              "  github:\n"
                              "    endpoints:\n"
                              "      - host: api.github.com\n"
                              "        port: 443\n"
                              "        protocol: rest\n"
                              "        enforcement: enforce\n"
                              "        access: read-only\n"
                              "    binaries: [{path: /usr/bin/gh}]\n";
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("orig.yaml", doc, strlen(doc), MODEL_FMT_YAML, d);
    struct model_policy *c, *e, *v1;
    char hp[65], hc[65], he[65], hv[65];
    char *y;

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) ? model_diags_line(d, 0) : "?");
    c = model_policy_copy(p);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_ne(c, p);
    ck_assert_str_eq(c->file, "orig.yaml");
    hash_of(p, hp);
    hash_of(c, hc);
    ck_assert_str_eq(hp, hc);
    ck_assert_uint_eq(model_policy_nrules(c), 1);
    ck_assert_str_eq(model_rule_key(model_policy_rule(c, 0)), "github");

    y = model_policy_to_yaml(p, NULL);
    model_policy_free(c);
    c = model_policy_load("y", y, strlen(y), MODEL_FMT_AUTO, d);
    ck_assert_msg(c != NULL, "%s", model_diags_count(d) ? model_diags_line(d, 0) : "?");
    hash_of(c, hc);
    ck_assert_str_eq(hp, hc);
    free(y);

    e = model_policy_new_empty();
    v1 = model_policy_load("v", "version: 1", 10, MODEL_FMT_AUTO, d);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(v1);
    hash_of(e, he);
    hash_of(v1, hv);
    ck_assert_str_eq(he, hv);
    ck_assert_str_ne(he, hp);
    ck_assert_ptr_null(model_policy_copy(NULL));
    ck_assert_ptr_null(model_policy_to_yaml(NULL, NULL));
    ck_assert_ptr_null(model_policy_to_json(NULL, NULL));
    ck_assert(!pv_ok(model_policy_sha256(NULL, he)));
    model_policy_free(e);
    model_policy_free(v1);
    model_policy_free(c);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

static Suite *canon_suite(void)
{
    Suite *s = suite_create("model_canon");
    TCase *tc = tcase_create("canon");

    tcase_add_test(tc, test_full_keys_emitted);
    tcase_add_test(tc, test_round_trips);
    tcase_add_loop_test(tc, test_hash_spellings, 0, (int)PV_ARRAY_LEN(hash_cases));
    tcase_add_test(tc, test_hash_known);
    tcase_add_test(tc, test_copy_and_empty);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(canon_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
