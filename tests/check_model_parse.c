/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_parse.c - YAML/JSON readers and the schema walker
 *
 * The parse stage (model_yaml_read / model_json_read + model_schema_policy)
 * is tested on its own so that shape errors are checked independently of
 * the validator: a full fixture that uses every key of the schema, the
 * compat parse vectors 010-015, and a table of documents that must fail
 * with an exact "LINE:COL: message". The full pipeline (model_policy_load,
 * load_file, diagnostics formatting) is tested at the end.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model_int.h"

static struct model_policy *parse_raw(const char *text, size_t len, enum model_format fmt,
                                      struct model_diags *d)
{
    struct model_node *root;
    struct model_policy *p;

    if (len == 0) {
        len = strlen(text);
    }
    if (fmt == MODEL_FMT_JSON) {
        root = model_json_read("t.json", text, len, d);
    } else {
        root = model_yaml_read("t.yaml", text, len, d);
    }
    if (root == NULL) {
        return NULL;
    }
    p = model_schema_policy(fmt == MODEL_FMT_JSON ? "t.json" : "t.yaml", root, d);
    model_node_free(root);
    return p;
}

/* ---------------------------------------------------------------------------
 * Every field
 * ------------------------------------------------------------------------- */

static const char full_yaml[] =
    "version: 1\n"
    "filesystem_policy:\n"
    "  include_workdir: true\n"
    "  read_only: [/usr, /lib]\n"
    "  read_write: [/tmp]\n"
    "landlock:\n"
    "  compatibility: best_effort\n"
    "process:\n"
    "  run_as_user: sandbox\n"
    "  run_as_group: \"1000\"\n"
    "network_policies:\n"
    "  full:\n"
    "    name: full-rule\n"
    "    endpoints:\n"
    "      - host: api.example.com\n"
    "        path: /v1/**\n"
    "        ports: [443, 8443]\n"
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
    "              force: {any: [\"true\"]}\n"
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
    "        json_rpc: {max_body_bytes: 4096}\n"
    "        rules: [{allow: {method: eth_call}}]\n"
    "      - host: mcp.example.com\n"
    "        port: 443\n"
    "        protocol: mcp\n"
    "        mcp: {max_body_bytes: 8192, strict_tool_names: true, "
    "allow_all_known_mcp_methods: false}\n"
    "        rules:\n"
    "          - allow: {method: tools/call, tool: \"search*\", "
    "params: {q: {nested: [1, \"two\", true, null, 1.5]}}}\n"
    "    binaries:\n"
    "      - path: /usr/bin/curl\n"
    "        harness: true\n"
    "      - {path: \"/sandbox/**/python3*\"}\n"
    "network_middlewares:\n"
    "  audit:\n"
    "    middleware: logger\n"
    "    order: 1\n"
    "    config: {level: info}\n";

#define ck_sval(v, want) ck_assert_str_eq((v).s != NULL ? (v).s : "(null)", (want))

START_TEST(test_full_fixture)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse_raw(full_yaml, 0, MODEL_FMT_YAML, d);
    const struct model_endpoint *e;
    const struct model_l7rule *r;
    char *params;

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) ? model_diags_line(d, 0) : "?");
    ck_assert_uint_eq(model_diags_count(d), 0);
    ck_assert(p->has_version);
    ck_assert_uint_eq(p->version, 1);
    ck_assert_uint_eq(p->version_mark.line, 1);
    ck_assert_uint_eq(p->version_mark.col, 10);
    ck_assert(p->has_fs && p->include_workdir);
    ck_assert_uint_eq(p->fs_read_only.n, 2);
    ck_sval(p->fs_read_only.v[1], "/lib");
    ck_assert_uint_eq(p->fs_read_write.n, 1);
    ck_sval(p->fs_read_write.v[0], "/tmp");
    ck_assert(p->has_landlock);
    ck_sval(p->landlock_compat, "best_effort");
    ck_assert(p->has_process);
    ck_sval(p->run_as_user, "sandbox");
    ck_sval(p->run_as_group, "1000");
    ck_assert_uint_eq(p->nrules, 1);
    ck_assert_str_eq(p->rules[0].key, "full");
    ck_assert_uint_eq(p->rules[0].key_mark.line, 12);
    ck_assert_uint_eq(p->rules[0].key_mark.col, 3);
    ck_sval(p->rules[0].name, "full-rule");
    ck_assert_str_eq(model_rule_display_name(&p->rules[0]), "full-rule");
    ck_assert_uint_eq(p->rules[0].nendpoints, 5);
    ck_assert_uint_eq(p->rules[0].nbinaries, 2);
    ck_sval(p->rules[0].binaries[0].path, "/usr/bin/curl");
    ck_assert(p->rules[0].binaries[0].harness);
    ck_assert_str_eq(model_rule_binary(&p->rules[0], 1), "/sandbox/**/python3*");
    ck_assert(!p->rules[0].binaries[1].harness);

    /* endpoint 0: REST with everything */
    e = &p->rules[0].endpoints[0];
    ck_sval(e->host, "api.example.com");
    ck_assert_uint_eq(e->host.mark.line, 15);
    ck_assert_uint_eq(e->host.mark.col, 15);
    ck_sval(e->path, "/v1/**");
    ck_assert(e->ports_given && !e->port_given);
    ck_assert_uint_eq(e->nports, 2);
    ck_assert_uint_eq(e->ports[0], 443);
    ck_assert_uint_eq(e->ports[1], 8443);
    ck_sval(e->protocol, "rest");
    ck_assert_int_eq(e->proto, MODEL_PROTO_REST);
    ck_sval(e->tls, "terminate");
    ck_assert(!e->tls_skip);
    ck_sval(e->enforcement, "enforce");
    ck_assert(e->enforce);
    ck_assert(e->rules_given && e->deny_given);
    ck_assert_uint_eq(e->nrules, 1);
    r = &e->rules[0];
    ck_sval(r->method, "GET");
    ck_sval(r->path, "/v1/items/*");
    ck_assert_uint_eq(r->nquery, 3);
    ck_sval(r->query[0].key, "tag");
    ck_assert_int_eq(r->query[0].form, MODEL_QFORM_STRING);
    ck_sval(r->query[0].globs.v[0], "v1-*");
    ck_sval(r->query[1].key, "kind");
    ck_assert_int_eq(r->query[1].form, MODEL_QFORM_GLOB);
    ck_assert_uint_eq(r->query[1].globs.n, 1);
    ck_sval(r->query[1].globs.v[0], "a*");
    ck_sval(r->query[2].key, "env");
    ck_assert_int_eq(r->query[2].form, MODEL_QFORM_ANY);
    ck_assert_uint_eq(r->query[2].globs.n, 2);
    ck_sval(r->query[2].globs.v[1], "stage-*");
    ck_assert_uint_eq(e->ndeny, 1);
    ck_sval(e->deny_rules[0].method, "POST");
    ck_sval(e->deny_rules[0].path, "/v1/admin/**");
    ck_assert_uint_eq(e->deny_rules[0].nquery, 1);
    ck_sval(e->deny_rules[0].query[0].globs.v[0], "true");
    ck_assert_uint_eq(e->allowed_ips.n, 2);
    ck_sval(e->allowed_ips.v[0], "10.0.0.0/8");
    ck_assert(e->allow_encoded_slash && e->websocket_credential_rewrite &&
              e->request_body_credential_rewrite && e->allow_uninspected_credentials);
    ck_sval(e->credential_signing, "sigv4");
    ck_sval(e->signing_service, "s3");
    ck_sval(e->signing_region, "us-east-1");
    ck_sval(e->credential_binding_provider, "my-provider");
    ck_sval(e->target_sandbox, "sb-1");
    ck_assert(e->advisor_proposed);

    /* endpoint 1: GraphQL */
    e = &p->rules[0].endpoints[1];
    ck_assert(e->port_given && !e->ports_given);
    ck_assert_uint_eq(e->nports, 1);
    ck_assert_uint_eq(e->ports[0], 443);
    ck_assert_uint_eq(e->port_mark.line, 46);
    ck_assert_int_eq(e->proto, MODEL_PROTO_GRAPHQL);
    ck_sval(e->access, "read-only");
    ck_assert_int_eq(e->access_preset, MODEL_ACCESS_READ_ONLY);
    ck_sval(e->persisted_queries, "allow_registered");
    ck_assert_uint_eq(e->ngql_persisted, 1);
    ck_sval(e->gql_persisted[0].id, "abc123");
    ck_sval(e->gql_persisted[0].operation_type, "query");
    ck_sval(e->gql_persisted[0].operation_name, "GetViewer");
    ck_sval(e->gql_persisted[0].fields.v[0], "viewer");
    ck_assert_uint_eq(e->graphql_max_body_bytes, 131072);
    ck_sval(e->rules[0].operation_type, "mutation");
    ck_sval(e->rules[0].operation_name, "Issue*");
    ck_sval(e->rules[0].fields.v[0], "createIssue");
    ck_sval(e->deny_rules[0].fields.v[0], "deleteRepository");

    /* endpoint 2: SQL; 3: JSON-RPC; 4: MCP */
    e = &p->rules[0].endpoints[2];
    ck_assert_int_eq(e->proto, MODEL_PROTO_SQL);
    ck_sval(e->rules[0].command, "SELECT");
    e = &p->rules[0].endpoints[3];
    ck_assert_int_eq(e->proto, MODEL_PROTO_JSONRPC);
    ck_assert(e->has_json_rpc);
    ck_assert_uint_eq(e->json_rpc_max_body_bytes, 4096);
    ck_sval(e->rules[0].method, "eth_call");
    e = &p->rules[0].endpoints[4];
    ck_assert_int_eq(e->proto, MODEL_PROTO_MCP);
    ck_assert(e->has_mcp && !e->has_json_rpc);
    ck_assert_uint_eq(e->mcp_max_body_bytes, 8192);
    ck_assert(e->mcp_strict_tool_names && !e->mcp_allow_all_known_methods);
    ck_sval(e->rules[0].tool, "search*");
    ck_assert_ptr_nonnull(e->rules[0].params);
    params = json_dumps(e->rules[0].params, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(params, "{\"q\":{\"nested\":[1,\"two\",true,null,1.5]}}");
    free(params);

    ck_assert_ptr_nonnull(p->middlewares);
    params = json_dumps(p->middlewares, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(params,
                     "{\"audit\":{\"config\":{\"level\":\"info\"},\"middleware\":\"logger\","
                     "\"order\":1}}");
    free(params);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* The same shapes spelled as JSON keep their JSON types and marks. */
START_TEST(test_json_types_and_marks)
{
    static const char doc[] = "{\n"
                              "  \"version\": 1,\n"
                              "  \"network_policies\": {\"k\": {\n"
                              "    \"endpoints\": [{\"host\": \"\xc3\xa9.example\", "
                              "\"port\": 443,\n"
                              "                   \"allow_encoded_slash\": true}],\n"
                              "    \"binaries\": [{\"path\": \"/usr/bin/curl\"}]}}\n"
                              "}\n";
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse_raw(doc, 0, MODEL_FMT_JSON, d);
    const struct model_endpoint *e;

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) ? model_diags_line(d, 0) : "?");
    ck_assert_uint_eq(p->version_mark.line, 2);
    ck_assert_uint_eq(p->version_mark.col, 14);
    ck_assert_str_eq(p->rules[0].key, "k");
    ck_assert_uint_eq(p->rules[0].key_mark.line, 3);
    ck_assert_uint_eq(p->rules[0].key_mark.col, 24);
    e = &p->rules[0].endpoints[0];
    ck_assert_uint_eq(e->host.mark.line, 4);
    ck_assert_uint_eq(e->host.mark.col, 28);
    /* columns count characters: the e-acute is one */
    ck_assert_uint_eq(e->port_mark.line, 4);
    ck_assert_uint_eq(e->port_mark.col, 49);
    ck_assert(e->allow_encoded_slash);
    ck_assert_uint_eq(p->rules[0].binaries[0].path.mark.line, 6);
    ck_assert_uint_eq(p->rules[0].binaries[0].path.mark.col, 27);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* jansson iterates objects in insertion (= document) order, so every key and
 * value gets its own position even where hash order would differ. */
START_TEST(test_json_key_order)
{
    char doc[8192];
    size_t n = 0;
    struct model_diags *d = model_diags_new();
    struct model_node *root;

    n += (size_t)snprintf(doc + n, sizeof(doc) - n, "{");
    for (int i = 0; i < 200; i++) {
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s\n \"k%03d\": [%d, \"v\"]",
                              i == 0 ? "" : ",", (i * 37) % 200, i);
    }
    n += (size_t)snprintf(doc + n, sizeof(doc) - n, "\n}");
    root = model_json_read("o.json", doc, n, d);
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(root->kind, MODEL_NODE_MAP);
    ck_assert_uint_eq(root->nitems, 400);
    for (int i = 0; i < 200; i++) {
        const struct model_node *k = root->items[2 * i];
        const struct model_node *v = root->items[2 * i + 1];
        char want[8];
        (void)snprintf(want, sizeof(want), "k%03d", (i * 37) % 200);
        ck_assert_str_eq(k->scalar, want);
        ck_assert_uint_eq(k->mark.line, (uint32_t)i + 2);
        ck_assert_uint_eq(k->mark.col, 2);
        ck_assert_uint_eq(v->mark.line, (uint32_t)i + 2);
        ck_assert_uint_eq(v->mark.col, 10);
        ck_assert_uint_eq(v->items[0]->mark.col, 11);
        ck_assert(v->items[0]->json_typed && v->items[0]->json_type == JSON_INTEGER);
        ck_assert(v->items[1]->quoted && v->items[1]->json_type == JSON_STRING);
    }
    model_node_free(root);
    model_diags_free(d);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Compat parse vectors (the reference's parser unit tests)
 * ------------------------------------------------------------------------- */

#define TESTDATA_POLICY                                                  \
    "version: 1\n"                                                       \
    "\n"                                                                 \
    "filesystem_policy:\n"                                               \
    "  include_workdir: true\n"                                          \
    "  read_only:\n"                                                     \
    "    - /usr\n"                                                       \
    "    - /lib\n"                                                       \
    "    - /proc\n"                                                      \
    "    - /dev/urandom\n"                                               \
    "    - /app\n"                                                       \
    "    - /etc\n"                                                       \
    "    - /var/log\n"                                                   \
    "  read_write:\n"                                                    \
    "    - /sandbox\n"                                                   \
    "    - /tmp\n"                                                       \
    "    - /dev/null\n"                                                  \
    "\n"                                                                 \
    "landlock:\n"                                                        \
    "  compatibility: best_effort\n"                                     \
    "\n"                                                                 \
    "process:\n"                                                         \
    "  run_as_user: sandbox\n"                                           \
    "  run_as_group: sandbox\n"                                          \
    "\n"                                                                 \
    "# Intent: read-only GitHub access for the agent.\n"                 \
    "# The REST API has L7 enforcement \xe2\x80\x94 only GET allowed.\n" \
    "network_policies:\n"                                                \
    "  github_api:\n"                                                    \
    "    name: github-api\n"                                             \
    "    endpoints:\n"                                                   \
    "      # REST API \xe2\x80\x94 L7 enforced, read-only\n"             \
    "      - host: api.github.com\n"                                     \
    "        port: 443\n"                                                \
    "        protocol: rest\n"                                           \
    "        enforcement: enforce\n"                                     \
    "        access: read-only\n"                                        \
    "      # github.com \xe2\x80\x94 for git clone.\n"                   \
    "      # No protocol field \xe2\x80\x94 L4 only.\n"                  \
    "      - host: github.com\n"                                         \
    "        port: 443\n"                                                \
    "    binaries:\n"                                                    \
    "      - { path: /usr/local/bin/claude }\n"                          \
    "      - { path: /usr/bin/git }\n"                                   \
    "      - { path: /usr/bin/curl }\n"                                  \
    "      - { path: /usr/bin/gh }\n"                                    \
    "      - { path: /sandbox/.uv/python/**/python3* }\n"

struct compat_case {
    const char *name;
    const char *yaml;
    int include_workdir; /* expected value */
    const char *ro_has;  /* a read_only entry, or NULL */
    const char *rw_has;  /* a read_write entry, or NULL */
    const char *absent;  /* must be in neither list, or NULL */
    int sandbox_count;   /* occurrences of /sandbox in read_write, -1 = don't care */
};

static const struct compat_case compat_cases[] = {
    {"010-parse-testdata-policy", TESTDATA_POLICY, 1, "/usr", "/sandbox", NULL, 1},
    {"011-parse-filesystem-readable-paths", TESTDATA_POLICY, 1, "/var/log", "/tmp", NULL, -1},
    {"012-parse-include-workdir-default-false",
     "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n", 0, "/usr", NULL, "/sandbox", 0},
    {"013-parse-include-workdir-explicit-false",
     "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_only:\n    - /usr\n", 0,
     "/usr", NULL, "/sandbox", 0},
    {"014-parse-include-workdir-no-duplicate",
     "version: 1\nfilesystem_policy:\n  include_workdir: true\n  read_write:\n    - /sandbox\n"
     "    - /tmp\n",
     1, NULL, "/tmp", NULL, 1},
    {"015-parse-include-workdir-keeps-explicit-path",
     "version: 1\nfilesystem_policy:\n  include_workdir: true\n  read_write:\n    - /sandbox\n", 1,
     NULL, "/sandbox", "/workspace/project", 1},
};

static bool list_has(const struct model_strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].s, s) == 0) {
            return true;
        }
    }
    return false;
}

START_TEST(test_compat_parse)
{
    const struct compat_case *c = &compat_cases[_i];
    struct model_diags *d = model_diags_new();
    /* valid policies: the whole pipeline (parse, validate, compile) */
    struct model_policy *p =
        model_policy_load(c->name, c->yaml, strlen(c->yaml), MODEL_FMT_AUTO, d);
    int count = 0;

    ck_assert_msg(p != NULL, "%s: %s", c->name,
                  model_diags_count(d) ? model_diags_line(d, 0) : "?");
    ck_assert_uint_eq(p->version, 1);
    ck_assert_int_eq(p->include_workdir, c->include_workdir);
    if (c->ro_has != NULL) {
        ck_assert_msg(list_has(&p->fs_read_only, c->ro_has), "%s", c->name);
    }
    if (c->rw_has != NULL) {
        ck_assert_msg(list_has(&p->fs_read_write, c->rw_has), "%s", c->name);
    }
    if (c->absent != NULL) {
        ck_assert(!list_has(&p->fs_read_only, c->absent));
        ck_assert(!list_has(&p->fs_read_write, c->absent));
    }
    for (size_t i = 0; i < p->fs_read_write.n; i++) {
        count += strcmp(p->fs_read_write.v[i].s, "/sandbox") == 0;
    }
    if (c->sandbox_count >= 0) {
        ck_assert_int_eq(count, c->sandbox_count);
    }
    if (c->yaml == compat_cases[0].yaml) {
        /* 010: key kept as the map key, name wins for display, 2 endpoints, >= 4 binaries */
        const struct model_rule *r = model_policy_find_rule(p, "github_api");
        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(model_rule_key(r), "github_api");
        ck_assert_str_eq(model_rule_display_name(r), "github-api");
        ck_assert_uint_eq(model_rule_nendpoints(r), 2);
        ck_assert_uint_ge(model_rule_nbinaries(r), 4);
        ck_assert_int_eq(model_rule_endpoint(r, 1)->proto, MODEL_PROTO_NONE);
        ck_assert_ptr_null(model_rule_endpoint(r, 2));
        ck_assert_ptr_null(model_policy_find_rule(p, "github-api"));
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Parse-stage table: exact first diagnostic (or none)
 * ------------------------------------------------------------------------- */

struct parse_case {
    enum model_format fmt;
    const char *text;
    size_t len; /* 0 = strlen */
    uint32_t line, col;
    const char *msg; /* NULL = must parse */
};

#define Y MODEL_FMT_YAML
#define J MODEL_FMT_JSON
#define EP_HEAD "version: 1\nnetwork_policies:\n  k:\n    endpoints:\n      - host: a.com\n"

static const struct parse_case parse_cases[] = {
    /* positive rows */
    {Y, "version: 1\n", 0, 0, 0, NULL},
    {J, "{\"version\": 1}", 0, 0, 0, NULL},
    {Y, "version: 1\nfilesystem_policy:\nnetwork_policies: {}\n", 0, 0, 0, NULL},
    {Y, EP_HEAD "        port: 65535\n        ports: [0, 1]\n", 0, 0, 0, NULL},
    {J, "{\"version\": 1, \"network_policies\": null}", 0, 0, 0, NULL},
    {Y, "version: 4294967295\n", 0, 0, 0, NULL},
    {Y, "version: 1\nprocess: {run_as_user: 1000}\n", 0, 0, 0, NULL},

    /* unknown keys, at every level */
    {Y, "version: 1\nbogus: 1\n", 0, 2, 1, "unknown field 'bogus' in policy"},
    {Y, "version: 1\nfilesystem_policy:\n  bogus: 1\n", 0, 3, 3,
     "unknown field 'bogus' in filesystem_policy"},
    {Y, "version: 1\nlandlock:\n  mode: x\n", 0, 3, 3, "unknown field 'mode' in landlock"},
    {Y, "version: 1\nprocess:\n  user: x\n", 0, 3, 3, "unknown field 'user' in process"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    bogus: 1\n", 0, 4, 5,
     "unknown field 'bogus' in network policy 'k'"},
    {Y, EP_HEAD "        bogus: 1\n", 0, 6, 9, "unknown field 'bogus' in endpoint"},
    {Y, EP_HEAD "        rules:\n          - allow: {method: GET}\n            bogus: 1\n", 0, 8,
     13, "unknown field 'bogus' in rule"},
    {Y, EP_HEAD "        rules:\n          - allow: {method: GET, bogus: 1}\n", 0, 7, 34,
     "unknown field 'bogus' in allow"},
    {Y, EP_HEAD "        deny_rules:\n          - method: GET\n            bogus: 1\n", 0, 8, 13,
     "unknown field 'bogus' in deny rule"},
    {Y, EP_HEAD "        rules:\n          - allow: {query: {a: {glob: x, bogus: y}}}\n", 0, 7, 42,
     "unknown field 'bogus' in query matcher"},
    {Y,
     EP_HEAD "        graphql_persisted_queries:\n"
             "          h: {operation_type: query, x: 1}\n",
     0, 7, 38, "unknown field 'x' in graphql persisted query"},
    {Y, EP_HEAD "        json_rpc: {max: 1}\n", 0, 6, 20, "unknown field 'max' in json_rpc"},
    {Y, EP_HEAD "        mcp: {strict: true}\n", 0, 6, 15, "unknown field 'strict' in mcp"},
    {Y, EP_HEAD "        credential_binding: {name: x}\n", 0, 6, 30,
     "unknown field 'name' in credential_binding"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    binaries:\n      - path: /x\n        sha: 1\n", 0,
     6, 9, "unknown field 'sha' in binary"},
    {J,
     "{\"version\": 1,\n \"network_policies\": {\"k\": {\"endpoints\": [{\"host\": \"a\", "
     "\"prot\": 1}]}}}",
     0, 2, 57, "unknown field 'prot' in endpoint (did you mean 'port'?)"},
    {Y, "version: 1\n\"bad\\tkey\": 1\n", 0, 2, 1, "unknown field 'bad?key' in policy"},

    /* wrong types */
    {Y, EP_HEAD "        port: \"443\"\n", 0, 6, 15, "field 'port' must be an integer"},
    {Y, EP_HEAD "        port: 0443\n", 0, 6, 15, "field 'port' must be an integer"},
    {Y, EP_HEAD "        port: 443.0\n", 0, 6, 15, "field 'port' must be an integer"},
    {Y, EP_HEAD "        ports: 443\n", 0, 6, 16, "field 'ports' must be a list"},
    {Y, EP_HEAD "        ports: [443, https]\n", 0, 6, 22,
     "field 'ports' must be a list of integers"},
    {Y, EP_HEAD "        host2: 1\n", 0, 6, 9,
     "unknown field 'host2' in endpoint (did you mean 'host'?)"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    endpoints:\n      - host: [a]\n", 0, 5, 15,
     "field 'host' must be a string"},
    {Y, EP_HEAD "        allow_encoded_slash: yes\n", 0, 6, 30,
     "field 'allow_encoded_slash' must be a boolean (true or false)"},
    {Y, EP_HEAD "        allow_encoded_slash: \"true\"\n", 0, 6, 30,
     "field 'allow_encoded_slash' must be a boolean (true or false)"},
    {Y, "version: \"1\"\n", 0, 1, 10, "field 'version' must be an integer"},
    {Y, "version: 1\nnetwork_policies: []\n", 0, 2, 19,
     "field 'network_policies' must be a mapping"},
    {Y, "version: 1\nnetwork_policies:\n  k: 5\n", 0, 3, 6, "network policy 'k' must be a mapping"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    endpoints: {host: a}\n", 0, 4, 16,
     "field 'endpoints' must be a list"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    endpoints: [a.com]\n", 0, 4, 17,
     "endpoint must be a mapping"},
    {Y, "version: 1\nfilesystem_policy:\n  read_only: [/a, [/b]]\n", 0, 3, 19,
     "field 'read_only' must be a list of strings"},
    {Y, EP_HEAD "        rules:\n          - allow: {query: {a: [x]}}\n", 0, 7, 32,
     "query value for 'a' must be a string or a mapping with 'glob' or 'any'"},
    {Y, EP_HEAD "        rules:\n          - allow: {query: {a: {glob: x, any: [y]}}}\n", 0, 7, 32,
     "query matcher for 'a' cannot have both 'glob' and 'any'"},
    {Y, EP_HEAD "        rules:\n          - allow: {query: {a: {}}}\n", 0, 7, 32,
     "query matcher for 'a' requires 'glob' or 'any'"},
    {Y, EP_HEAD "        rules:\n          - allow: GET\n", 0, 7, 20,
     "field 'allow' must be a mapping"},
    {J, "{\"version\": 1, \"network_policies\": {\"k\": {\"endpoints\": [{\"port\": \"443\"}]}}}",
     0, 1, 66, "field 'port' must be an integer"},
    {J, "{\"version\": 1, \"network_policies\": {\"k\": {\"name\": true}}}", 0, 1, 51,
     "field 'name' must be a string"},
    {J, "{\"version\": 1.0}", 0, 1, 13, "field 'version' must be an integer"},
    {J, "[{\"version\": 1}]", 0, 1, 1, "policy must be a mapping"},

    /* ranges and huge numbers */
    {Y, EP_HEAD "        port: 70000\n", 0, 6, 15, "port 70000 is out of range (0..65535)"},
    {Y, EP_HEAD "        ports: [443, 70000]\n", 0, 6, 22, "port 70000 is out of range (0..65535)"},
    {Y, EP_HEAD "        port: -1\n", 0, 6, 15, "port -1 is out of range (0..65535)"},
    {Y, EP_HEAD "        port: 99999999999999999999999999\n", 0, 6, 15,
     "port 99999999999999999999999999 is out of range (0..65535)"},
    {Y, "version: 4294967296\n", 0, 1, 10,
     "field 'version' value 4294967296 is out of range (0..4294967295)"},
    {Y, EP_HEAD "        graphql_max_body_bytes: 5000000000\n", 0, 6, 33,
     "field 'graphql_max_body_bytes' value 5000000000 is out of range (0..4294967295)"},
    {J, "{\"version\": 1, \"network_policies\": {\"k\": {\"endpoints\": [{\"port\": 70000}]}}}", 0,
     1, 66, "port 70000 is out of range (0..65535)"},
    {J, "{\"version\": 99999999999999999999999}", 0, 1, 35, "invalid JSON: too big integer"},

    /* required fields */
    {Y, "network_policies: {}\n", 0, 1, 1, "missing required field 'version'"},
    {J, "{}", 0, 1, 1, "missing required field 'version'"},
    {Y, EP_HEAD "        rules:\n          - {}\n", 0, 7, 13, "rule item requires 'allow'"},
    {Y, EP_HEAD "        rules:\n          - GET\n", 0, 7, 13,
     "rule item must be a mapping with 'allow'"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    binaries:\n      - harness: true\n", 0, 5, 9,
     "binary item requires 'path'"},
    {Y, "version: 1\nnetwork_policies:\n  k:\n    binaries:\n      - /usr/bin/curl\n", 0, 5, 9,
     "binary must be a mapping with 'path'"},

    /* reader errors */
    {Y, "version: 1\nversion: 2\n", 0, 2, 1, "duplicate key 'version'"},
    {Y, "version: 1\nlandlock:\n  compatibility: a\n  x: 1\n  compatibility: b\n", 0, 5, 3,
     "duplicate key 'compatibility'"},
    {J, "{\"version\": 1,\n \"version\": 2}", 0, 2, 10,
     "invalid JSON: duplicate object key near '\"version\"'"},
    {Y, "version: &v 1\n", 0, 1, 10, "aliases and anchors are not supported"},
    {Y, "a: &x {b: 1}\nversion: 1\n", 0, 1, 4, "aliases and anchors are not supported"},
    {Y, "version: 1\nx: *y\n", 0, 2, 4, "aliases and anchors are not supported"},
    {Y, "version: !!int 1\n", 0, 1, 10, "YAML tags are not supported"},
    {Y, "? [a]\n: 1\n", 0, 1, 3, "mapping keys must be scalars"},
    {Y, "version: 1\n---\nversion: 2\n", 0, 2, 1, "more than one YAML document"},
    {Y, "version: 1\n  x: [\n", 0, 2, 4,
     "invalid YAML: mapping values are not allowed in this context"},
    {Y, "version: [1\n", 0, 2, 1,
     "invalid YAML: did not find expected ',' or ']' while parsing a flow sequence"},
    {Y, "version: 1\nx: \"a\\0b\"\n", 0, 2, 4, "string contains a NUL byte"},
    {J, "{\"version\": 1,\n \"x\": }", 0, 2, 7, "invalid JSON: unexpected token near '}'"},
    {J, "{\"version\": 1}\n x", 0, 2, 2, "invalid JSON: end of file expected near 'x'"},
    {J, "{\"version\": 1, \"x\": \"a\\u0000b\"}", 0, 1, 30,
     "invalid JSON: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"'"},
    {Y, "", 0, 1, 1, "empty policy document"},
    {Y, "---\n", 0, 2, 1, "empty policy document"},
    {Y, "# only a comment\n", 0, 2, 1, "empty policy document"},
    {J, "  \n", 0, 1, 1, "empty policy document"},
    {Y, "hello\n", 0, 1, 1, "policy must be a mapping"},
    /* non-UTF-8 junk */
    {Y, "version: 1\nname: \xc3\x28\n", 0, 2, 8, "invalid YAML: invalid trailing UTF-8 octet"},
    {Y, "\x80\x81junk", 0, 1, 1, "invalid YAML: invalid leading UTF-8 octet"},
    {Y, "version: 1\n\x00x", 13, 2, 1, "invalid YAML: control characters are not allowed"},
    {J, "\x80", 0, 1, 1, "invalid JSON: unable to decode byte 0x80"},
    /* quoted input never breaks a diagnostic across lines (fuzz finding) */
    {J, "{\n \"ve[]rsion$: \\\n}", 0, 3, 1,
     "invalid JSON: invalid escape near '\"ve[]rsion$: \\?'"},
};

START_TEST(test_parse_table)
{
    const struct parse_case *c = &parse_cases[_i];
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse_raw(c->text, c->len, c->fmt, d);

    if (c->msg == NULL) {
        ck_assert_msg(p != NULL, "row %d: %s", _i,
                      model_diags_count(d) ? model_diags_line(d, 0) : "?");
        ck_assert_uint_eq(model_diags_count(d), 0);
    } else {
        ck_assert_msg(p == NULL, "row %d parsed", _i);
        ck_assert_uint_ge(model_diags_count(d), 1);
        ck_assert_msg(strcmp(model_diags_msg(d, 0), c->msg) == 0, "row %d: got '%s'", _i,
                      model_diags_line(d, 0));
        ck_assert_msg(d->v[0].mark.line == c->line && d->v[0].mark.col == c->col, "row %d: got %s",
                      _i, model_diags_line(d, 0));
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* Errors are all collected, each once. */
START_TEST(test_collect_all)
{
    static const char doc[] = "version: x\n"
                              "bogus: 1\n"
                              "network_policies:\n"
                              "  k:\n"
                              "    endpoints:\n"
                              "      - host: a\n"
                              "        port: 70000\n"
                              "        ports: [1, 2, 99999]\n"
                              "        tls: [x]\n"
                              "    binaries:\n"
                              "      - {harness: true}\n";
    static const char *const want[] = {
        "t.yaml:1:10: field 'version' must be an integer",
        "t.yaml:2:1: unknown field 'bogus' in policy",
        "t.yaml:7:15: port 70000 is out of range (0..65535)",
        "t.yaml:8:23: port 99999 is out of range (0..65535)",
        "t.yaml:9:14: field 'tls' must be a string",
        "t.yaml:11:9: binary item requires 'path'",
    };
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse_raw(doc, 0, MODEL_FMT_YAML, d);

    ck_assert_ptr_null(p);
    ck_assert_uint_eq(model_diags_count(d), PV_ARRAY_LEN(want));
    for (size_t i = 0; i < PV_ARRAY_LEN(want); i++) {
        ck_assert_str_eq(model_diags_line(d, i), want[i]);
    }
    model_diags_free(d);
}
END_TEST

/* Nesting and size limits of both readers. */
START_TEST(test_limits)
{
    char doc[400];
    struct model_diags *d;
    struct model_policy *p;
    size_t n;
    /* _i == 0: YAML, 1: JSON; 64 levels are fine, 65 are not */
    for (int depth = 63; depth <= 64; depth++) {
        if (_i == 0) {
            n = (size_t)snprintf(doc, sizeof(doc), "version: 1\nx: ");
        } else {
            n = (size_t)snprintf(doc, sizeof(doc), "{\"version\": 1,\n\"x\": ");
        }
        for (int i = 0; i < depth; i++) {
            doc[n++] = '[';
        }
        for (int i = 0; i < depth; i++) {
            doc[n++] = ']';
        }
        if (_i == 1) {
            doc[n++] = '}';
        }
        doc[n] = '\0';
        d = model_diags_new();
        p = parse_raw(doc, n, _i == 0 ? MODEL_FMT_YAML : MODEL_FMT_JSON, d);
        ck_assert_ptr_null(p);
        ck_assert_uint_eq(model_diags_count(d), 1);
        if (depth == 63) {
            /* parses; only the unknown key 'x' is reported */
            ck_assert_str_eq(model_diags_msg(d, 0), "unknown field 'x' in policy");
        } else {
            ck_assert_str_eq(model_diags_msg(d, 0), "nesting is deeper than 64 levels");
            ck_assert_uint_eq(d->v[0].mark.line, 2);
            ck_assert_uint_eq(d->v[0].mark.col, _i == 0 ? 4 + 63 : 6 + 63);
        }
        model_diags_free(d);
    }
}
END_TEST

START_TEST(test_node_limit)
{
    /* 1,000,001 scalars in one flow sequence exceed the node limit. */
    size_t items = 1000001, n = 0;
    size_t cap = 32 + items * 2;
    char *doc = malloc(cap);
    struct model_diags *d = model_diags_new();

    ck_assert_ptr_nonnull(doc);
    n += (size_t)snprintf(doc, cap, "version: 1\nx: [");
    for (size_t i = 0; i < items; i++) {
        doc[n++] = '1';
        doc[n++] = ',';
    }
    doc[n - 1] = ']';
    doc[n] = '\0';
    ck_assert_ptr_null(parse_raw(doc, n, MODEL_FMT_YAML, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_msg(d, 0), "document has more than 1000000 nodes");
    model_diags_free(d);
    free(doc);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Full pipeline and diagnostics
 * ------------------------------------------------------------------------- */

START_TEST(test_diag_format)
{
    struct model_diags *d = model_diags_new();
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(model_diags_count(d), 0);
    ck_assert_ptr_null(model_diags_line(d, 0));
    ck_assert(pv_ok(model_diag_add(d, "f.yaml", (struct model_mark){3, 7}, "bad %s", "thing")));
    ck_assert(pv_ok(model_diag_add(d, "f.yaml", (struct model_mark){0, 0}, "whole file")));
    ck_assert(pv_ok(model_diag_add(d, NULL, (struct model_mark){1, 1}, "x")));
    ck_assert_uint_eq(model_diags_count(d), 3);
    ck_assert_str_eq(model_diags_line(d, 0), "f.yaml:3:7: bad thing");
    ck_assert_str_eq(model_diags_msg(d, 0), "bad thing");
    ck_assert_str_eq(model_diags_line(d, 1), "f.yaml: whole file");
    ck_assert_str_eq(model_diags_line(d, 2), "<input>:1:1: x");
    /* the borrowed line is stable */
    ck_assert_ptr_eq(model_diags_line(d, 0), model_diags_line(d, 0));
    ck_assert_ptr_null(model_diags_msg(d, 3));
    model_diags_free(d);
    model_diags_free(NULL);
    ck_assert_uint_eq(model_diags_count(NULL), 0);
}
END_TEST

START_TEST(test_diag_cap)
{
    struct model_diags *d = model_diags_new();
    for (int i = 0; i < 1500; i++) {
        ck_assert(pv_ok(model_diag_add(d, "f", (struct model_mark){1, 1}, "e%d", i)));
    }
    /* 1000 real ones and one notice */
    ck_assert_uint_eq(model_diags_count(d), 1001);
    ck_assert_str_eq(model_diags_msg(d, 999), "e999");
    ck_assert_str_eq(model_diags_line(d, 1000), "f: too many errors; the rest are not reported");
    model_diags_free(d);
}
END_TEST

struct load_case {
    const char *name;
    enum model_format fmt;
    const char *text;
    const char *first; /* expected first diagnostic line, NULL = loads */
};

static const struct load_case load_cases[] = {
    {"testdata", MODEL_FMT_AUTO, TESTDATA_POLICY, NULL},
    {"json-auto", MODEL_FMT_AUTO, "  \n{\"version\": 1}", NULL},
    {"yaml-flow-forced", MODEL_FMT_YAML, "{version: 1}", NULL},
    {"json-forced", MODEL_FMT_JSON, "version: 1",
     "p:1:7: invalid JSON: '[' or '{' expected near 'version'"},
    {"yaml-not-json", MODEL_FMT_AUTO, "{version: 1}",
     "p:1:8: invalid JSON: string or '}' expected near 'version'"},
    {"unknown", MODEL_FMT_AUTO, "version: 1\nbogus: 1\n", "p:2:1: unknown field 'bogus' in policy"},
    {"empty", MODEL_FMT_AUTO, "", "p:1:1: empty policy document"},
    {"missing-version", MODEL_FMT_AUTO, "network_policies: {}\n",
     "p:1:1: missing required field 'version'"},
};

START_TEST(test_load)
{
    const struct load_case *c = &load_cases[_i];
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("p", c->text, strlen(c->text), c->fmt, d);

    if (c->first == NULL) {
        ck_assert_msg(p != NULL, "%s: %s", c->name,
                      model_diags_count(d) ? model_diags_line(d, 0) : "?");
        ck_assert_uint_eq(model_diags_count(d), 0);
        ck_assert_uint_eq(p->version, 1);
        ck_assert_str_eq(p->file, "p");
    } else {
        ck_assert_ptr_null(p);
        ck_assert_uint_ge(model_diags_count(d), 1);
        ck_assert_str_eq(model_diags_line(d, 0), c->first);
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* A policy (or proposal) under one key of a bigger document: diagnostics
 * point into the whole document; a missing key, a non-mapping document and
 * the other keys' content are handled. */
START_TEST(test_load_member)
{
    static const char doc[] = "name: c\n"
                              "baseline: {version: 1}\n"
                              "candidate:\n"
                              "  version: 1\n"
                              "  network_policies:\n"
                              "    r: {endpoints: [{host: a.example.com, port: 99999}],"
                              " binaries: [{path: /usr/bin/curl}]}\n"
                              "proposal:\n"
                              "  operations:\n"
                              "  - addRule: {ruleName: x, rule: {endpoints: [{host: a.example.com,"
                              " port: 443, bogus: 1}], binaries: [{path: /usr/bin/curl}]}}\n";
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    struct model_proposal *pr;

    p = model_policy_load_member("case.yaml", doc, strlen(doc), "baseline", d);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(model_diags_count(d), 0);
    ck_assert_uint_eq(p->version_mark.line, 2);
    ck_assert_uint_eq(p->version_mark.col, 21);
    model_policy_free(p);

    p = model_policy_load_member("case.yaml", doc, strlen(doc), "candidate", d);
    ck_assert_ptr_null(p);
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_line(d, 0),
                     "case.yaml:6:49: port 99999 is out of range (0..65535)");

    p = model_policy_load_member("case.yaml", doc, strlen(doc), "policy", d);
    ck_assert_ptr_null(p);
    ck_assert_uint_eq(model_diags_count(d), 2);
    ck_assert_str_eq(model_diags_line(d, 1), "case.yaml:1:1: document has no mapping key 'policy'");

    pr = model_proposal_load_member("case.yaml", doc, strlen(doc), "proposal", d);
    ck_assert_ptr_null(pr);
    ck_assert_uint_eq(model_diags_count(d), 3);
    ck_assert_str_eq(model_diags_line(d, 2), "case.yaml:9:80: unknown field 'bogus' in endpoint");

    pr = model_proposal_load_member("list.yaml", "- 1\n", 4, "proposal", d);
    ck_assert_ptr_null(pr);
    ck_assert_uint_eq(model_diags_count(d), 4);
    ck_assert_str_eq(model_diags_line(d, 3),
                     "list.yaml:1:1: document has no mapping key 'proposal'");
    model_diags_free(d);
}
END_TEST

START_TEST(test_load_file)
{
    char path[] = "/tmp/check_model_parse_XXXXXX";
    int fd = mkstemp(path);
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    char *big;
    size_t bigsz = MODEL_MAX_POLICY_BYTES + 10;
    FILE *f;

    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs("version: 1\nnetwork_policies: {}\n", f);
    fclose(f);
    p = model_policy_load_file(path, MODEL_FMT_AUTO, d);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->file, path);
    model_policy_free(p);

    /* too big: one comment line longer than the limit */
    big = malloc(bigsz);
    ck_assert_ptr_nonnull(big);
    memset(big, '#', bigsz);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(big, 1, bigsz, f), bigsz);
    fclose(f);
    free(big);
    ck_assert_ptr_null(model_policy_load_file(path, MODEL_FMT_AUTO, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    /* the common reader's message (common/pv_file.h) */
    ck_assert_str_eq(model_diags_msg(d, 0), "larger than 4194304 bytes");
    unlink(path);

    /* missing */
    ck_assert_ptr_null(model_policy_load_file(path, MODEL_FMT_AUTO, d));
    ck_assert_uint_eq(model_diags_count(d), 2);
    ck_assert_str_eq(model_diags_msg(d, 1), "No such file or directory");
    ck_assert_ptr_eq(strstr(model_diags_line(d, 1), path), model_diags_line(d, 1));

    /* a directory */
    ck_assert_ptr_null(model_policy_load_file("/", MODEL_FMT_AUTO, d));
    ck_assert_uint_eq(model_diags_count(d), 3);
    ck_assert_str_eq(model_diags_line(d, 2), "/: Is a directory");
    model_diags_free(d);

    /* in-memory over-size */
    d = model_diags_new();
    ck_assert_ptr_null(
        model_policy_load("m", "version: 1", MODEL_MAX_POLICY_BYTES + 1, MODEL_FMT_YAML, d));
    ck_assert_str_eq(model_diags_line(d, 0), "m: policy is larger than 4194304 bytes");
    model_diags_free(d);
}
END_TEST

START_TEST(test_new_empty_and_accessors)
{
    struct model_policy *p = model_policy_new_empty();
    ck_assert_ptr_nonnull(p);
    ck_assert(p->has_version);
    ck_assert_uint_eq(p->version, 1);
    ck_assert_uint_eq(model_policy_nrules(p), 0);
    ck_assert_ptr_null(model_policy_rule(p, 0));
    ck_assert_ptr_null(model_policy_find_rule(p, "x"));
    model_policy_free(p);
    model_policy_free(NULL);
    ck_assert_uint_eq(model_policy_nrules(NULL), 0);
    ck_assert_ptr_null(model_rule_key(NULL));
    ck_assert_ptr_null(model_rule_display_name(NULL));
    ck_assert_ptr_null(model_rule_binary(NULL, 0));
}
END_TEST

/* Clearing twice is harmless and leaves zeroed structs. */
START_TEST(test_clear_twice)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse_raw(full_yaml, 0, MODEL_FMT_YAML, d);
    struct model_rule r;

    ck_assert_ptr_nonnull(p);
    r = p->rules[0];
    p->nrules = 0; /* take the rule out of the policy */
    model_rule_clear(&r);
    ck_assert_ptr_null(r.key);
    ck_assert_uint_eq(r.nendpoints, 0);
    model_rule_clear(&r);
    model_endpoint_clear(NULL);
    model_l7rule_clear(NULL);
    model_sval_clear(NULL);
    model_strlist_clear(NULL);
    model_node_free(NULL);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

static Suite *parse_suite(void)
{
    Suite *s = suite_create("model_parse");
    TCase *tc = tcase_create("parse");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_full_fixture);
    tcase_add_test(tc, test_load_member);
    tcase_add_test(tc, test_json_types_and_marks);
    tcase_add_test(tc, test_json_key_order);
    tcase_add_loop_test(tc, test_compat_parse, 0, (int)PV_ARRAY_LEN(compat_cases));
    tcase_add_loop_test(tc, test_parse_table, 0, (int)PV_ARRAY_LEN(parse_cases));
    tcase_add_test(tc, test_collect_all);
    tcase_add_loop_test(tc, test_limits, 0, 2);
    tcase_add_test(tc, test_node_limit);
    tcase_add_test(tc, test_diag_format);
    tcase_add_test(tc, test_diag_cap);
    tcase_add_loop_test(tc, test_load, 0, (int)PV_ARRAY_LEN(load_cases));
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_new_empty_and_accessors);
    tcase_add_test(tc, test_clear_twice);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(parse_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
