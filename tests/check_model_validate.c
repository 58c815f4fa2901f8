/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_validate.c - table tests for model_policy_validate()
 *
 * Every row is a small YAML policy read through the real pipeline pieces
 * (model_yaml_read, model_schema_policy) and then validated. Negative rows
 * name the expected message (a substring, usually the whole reference text)
 * and the line:col of the offending value; positive rows must validate with
 * no diagnostic. Further tests check the normalisation (ports, hosts,
 * methods, rule order, cidrs, enum fields), that every violation is
 * collected, and the limits that need generated input.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

/* One rule 'r' with one binary; the first endpoint key is on line 6 and
 * its value at column 9 + strlen(key) + 2. */
#define HDR                                   \
    "version: 1\n"                            \
    "network_policies:\n"                     \
    "  r:\n"                                  \
    "    binaries: [{path: /usr/bin/curl}]\n" \
    "    endpoints:\n"
#define EP(kv) HDR "      - " kv "\n"
#define KV(kv) "        " kv "\n"
/* Endpoint with a valid host and port; the next KV is on line 8. */
#define EPH EP("host: a.example.com") KV("port: 443")
#define L7 "network policy 'r': endpoint 0 has invalid L7 configuration: "

/* The diagnostics as text, cut to what a Check message can carry. */
static char *dump_diags(struct model_diags *d)
{
    struct pv_dynbuf b;
    char *s;
    pv_dynbuf_init(&b, 2048);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (!pv_ok(pv_dynbuf_printf(&b, "  %s\n", model_diags_line(d, i)))) {
            break;
        }
    }
    if (b.buf == NULL) {
        ck_assert(pv_ok(pv_dynbuf_addstr(&b, "  (none)\n")));
    }
    s = pv_dynbuf_take(&b, NULL);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Parse 'yaml' into a policy; a parse failure is a broken test row. */
static struct model_policy *parse(const char *yaml, struct model_diags *d)
{
    struct model_node *root = model_yaml_read("t.yaml", yaml, strlen(yaml), d);
    struct model_policy *p = NULL;

    if (root != NULL) {
        p = model_schema_policy("t.yaml", root, d);
        model_node_free(root);
    }
    if (p == NULL || model_diags_count(d) != 0) {
        char *s = dump_diags(d);
        ck_abort_msg("test policy does not parse:\n%.1500s\n%s", yaml, s);
        free(s);
    }
    return p;
}

/* ===========================================================================
 * Negative rows: one per message (at least)
 * ========================================================================= */

struct neg_row {
    const char *yaml;
    const char *msg;
    uint32_t line, col;
};

static const struct neg_row neg_rows[] = {
    /* version, process, filesystem */
    {"version: 2\n", "unsupported policy version 2; expected 1", 1, 10},
    {"version: 1\nprocess:\n  run_as_user: root\n",
     "run_as_user must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got 'root'", 3,
     16},
    {"version: 1\nprocess:\n  run_as_user: '0'\n",
     "run_as_user must be 'sandbox' or a numeric "
     "UID/GID in range [1, 4294967294], got '0'",
     3, 16},
    {"version: 1\nprocess:\n  run_as_group: '4294967295'\n",
     "run_as_group must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got "
     "'4294967295'",
     3, 17},
    {"version: 1\nprocess:\n  run_as_group: nobody\n", "got 'nobody'", 3, 17},
    {"version: 1\nfilesystem_policy:\n  read_only: [usr/lib]\n",
     "path must be absolute (start with '/'): usr/lib", 3, 15},
    {"version: 1\nfilesystem_policy:\n  read_write: [/tmp/../etc]\n",
     "path contains '..' traversal component: /tmp/../etc", 3, 16},
    {"version: 1\nfilesystem_policy:\n  read_only: [/usr/..]\n",
     "path contains '..' traversal component: /usr/..", 3, 15},
    {"version: 1\nfilesystem_policy:\n  read_write: ['///']\n",
     "read-write path is overly broad: ///", 3, 16},
    {"version: 1\nfilesystem_policy:\n  read_write: [/]\n", "read-write path is overly broad: /", 3,
     16},

    /* binaries */
    {"version: 1\nnetwork_policies:\n  r:\n    binaries: [{path: ''}]\n    endpoints:\n"
     "      - host: a.example.com\n        port: 443\n",
     "network policy 'r': binary path must not be empty", 4, 23},
    {"version: 1\nnetwork_policies:\n  r:\n    binaries: [{path: '/usr/bin/[ab'}]\n"
     "    endpoints:\n      - host: a.example.com\n        port: 443\n",
     "network policy 'r': invalid binary pattern '/usr/bin/[ab': ", 4, 23},

    /* hosts */
    {EP("port: 443") KV("protocol: tcp") KV("allowed_ips: [10.0.0.0/8]"),
     "network policy 'r': protocol tcp requires a DNS hostname; hostless allowed_ips endpoints "
     "are supported only by the forward proxy",
     6, 9},
    {EP("port: 443"),
     "network policy 'r': endpoint host must not be empty unless allowed_ips constrains a "
     "non-TCP proxy endpoint",
     6, 9},
    {EP("host: ''") KV("port: 443"), "endpoint host must not be empty unless allowed_ips", 6, 15},
    {EP("host: '  '") KV("port: 443"), "endpoint host must not be empty unless allowed_ips", 6, 15},
    {EP("host: 10.1.2.3") KV("port: 22") KV("protocol: tcp"),
     "network policy 'r': protocol tcp endpoint '10.1.2.3' must use a DNS hostname, not an IP "
     "literal; direct IP connections bypass policy DNS and are blocked",
     6, 15},
    {EP("host: '2001:db8::1'") KV("port: 22") KV("protocol: tcp"),
     "protocol tcp endpoint '2001:db8::1' must use a DNS hostname, not an IP literal", 6, 15},
    {EP("host: db.example.com.") KV("port: 5432") KV("protocol: tcp"),
     "network policy 'r': protocol tcp endpoint has invalid DNS host selector 'db.example.com.': "
     "omit the trailing DNS root dot",
     6, 15},
    {EP("host: ' db.example.com'") KV("port: 5432") KV("protocol: tcp"),
     "invalid DNS host selector ' db.example.com': leading or trailing whitespace is not allowed",
     6, 15},
    {EP("host: db..example.com") KV("port: 5432") KV("protocol: tcp"),
     "invalid DNS host selector 'db..example.com': selector cannot represent a valid DNS name", 6,
     15},
    {EP("host: a.example.com"),
     "network policy 'r': endpoint 'a.example.com' must declare at least one port", 6, 9},
    {EP("host: a.example.com") KV("port: 80") KV("ports: [443, 8443]"),
     "network policy 'r': endpoint 'a.example.com' sets port 80, which is not in ports", 7, 15},
    {EP("host: a.example.com") KV("ports: [443, 8443]") KV("port: 80"),
     "network policy 'r': endpoint 'a.example.com' sets port 80, which is not in ports", 8, 15},
    {EP("host: a.example.com") KV("ports: [0, 443]"),
     "network policy 'r': endpoint 'a.example.com' has invalid port 0; expected 1..=65535", 7, 16},
    {EP("host: '*.com'") KV("port: 443"),
     "network policy 'r': TLD wildcard '*.com' is not allowed; use subdomain wildcards like "
     "'*.example.com' instead",
     6, 15},
    {EP("host: '**.COM.'") KV("port: 443"), "TLD wildcard '**.com' is not allowed", 6, 15},
    {EP("host: '*'") KV("port: 443"),
     "network policy 'r': invalid host wildcard '*'; middle DNS label wildcards must be the "
     "entire label '*' and recursive '**' is only allowed as the entire first label",
     6, 15},
    {EP("host: '**'") KV("port: 443"), "invalid host wildcard '**'", 6, 15},
    {EP("host: 'api.*x.example.com'") KV("port: 443"), "invalid host wildcard 'api.*x.example.com'",
     6, 15},
    {EP("host: 'x**.example.com'") KV("port: 443"), "invalid host wildcard 'x**.example.com'", 6,
     15},
    {EP("host: 'a.**.example.com'") KV("port: 443"), "invalid host wildcard 'a.**.example.com'", 6,
     15},
    {EP("host: 010.0.0.1") KV("port: 443"),
     "network policy 'r': endpoint host '010.0.0.1' is a non-canonical IP literal; write it as "
     "'8.0.0.1'",
     6, 15},
    {EP("host: 'exa mple.com'") KV("port: 443"),
     "network policy 'r': invalid host pattern 'exa mple.com': invalid character 0x20", 6, 15},
    {EP("host: 'a..example.com'") KV("port: 443"),
     "network policy 'r': invalid host pattern 'a..example.com': empty label", 6, 15},
    {EP("host: 'api.example.123'") KV("port: 443"),
     "invalid host pattern 'api.example.123': the last label of a DNS name must start with a "
     "letter",
     6, 15},
    {EP("host: '.'") KV("port: 443"), "invalid host pattern '': empty host name", 6, 15},

    /* signing */
    {EPH KV("credential_signing: sigv5") KV("signing_service: s3"),
     "network policy 'r': endpoint 'a.example.com' has unrecognized credential_signing value "
     "'sigv5' (expected sigv4, sigv4:body, or sigv4:no_body)",
     8, 29},
    {EPH KV("credential_signing: sigv4"),
     "network policy 'r': endpoint 'a.example.com' has credential_signing set but "
     "signing_service is empty",
     8, 29},
    {EPH KV("protocol: rest") KV("access: full") KV("request_body_credential_rewrite: true")
         KV("credential_signing: sigv4") KV("signing_service: s3"),
     "network policy 'r': endpoint 'a.example.com' has both credential_signing and "
     "request_body_credential_rewrite set; these options are mutually exclusive",
     11, 29},

    /* L7 configuration */
    {EPH KV("protocol: rest") KV("access: full") KV("tls: skp"),
     L7 "unknown tls value 'skp' (expected skip, terminate, or passthrough)", 10, 14},
    {EPH KV("protocol: rest") KV("access: full") KV("enforcement: enforced"),
     L7 "unknown enforcement value 'enforced' (expected enforce or audit)", 10, 22},
    {EPH KV("protocol: rest") KV("access: read_only"),
     L7 "unknown access value 'read_only' (expected read-only, read-write, or full)", 9, 17},
    {EPH KV("protocol: https"),
     L7 "unknown protocol 'https' (expected tcp, rest, websocket, graphql, sql, json-rpc, or mcp)",
     8, 19},
    {EPH KV("protocol: tcp") KV("access: full"),
     L7 "protocol tcp does not support access, rules, or deny_rules; remove those L7 fields", 8,
     19},
    {EPH KV("protocol: rest") KV("access: full") KV("rules: [{allow: {method: GET, path: /}}]"),
     L7 "rules and access are mutually exclusive", 9, 17},
    {EPH KV("protocol: mcp") KV("access: full"),
     L7 "protocol mcp does not support access presets; use rules/deny_rules or set "
        "mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy",
     9, 17},
    {EPH KV("protocol: json-rpc") KV("access: full"),
     L7 "protocol json-rpc does not support access presets; use explicit rules with allow.method "
        "such as \"*\"",
     9, 17},
    {EPH KV("protocol: json-rpc"), L7 "protocol json-rpc requires explicit rules with allow.method",
     8, 19},
    {EPH KV("protocol: rest"), L7 "protocol requires rules or access to define allowed traffic", 8,
     19},
    {EPH KV("protocol: graphql") KV("enforcement: enforce"),
     L7 "protocol requires rules or access to define allowed traffic", 8, 19},
    {EPH KV("protocol: mcp"),
     L7 "protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false", 8, 19},
    {EPH KV("protocol: rest") KV("rules:") "          - allow: {}\n",
     L7 "rules would deny all traffic (no allow clause found). Use `access: full` or add allow "
        "clauses to rules.",
     10, 20},
    {EPH KV("deny_rules: [{method: POST, path: /x}]"),
     L7 "deny_rules require protocol (L7 inspection must be enabled)", 8, 22},
    {EPH KV("protocol: rest") KV("deny_rules: [{method: POST, path: /x}]"),
     L7 "deny_rules require rules or access to define the base allow set", 9, 22},
    {EPH KV("protocol: rest") KV("rules: []"),
     L7 "rules list cannot be empty (would deny all traffic). Use `access: full` or remove rules.",
     6, 9},
    {EPH KV("protocol: rest") KV("access: full") KV("deny_rules: []"),
     L7 "deny_rules list cannot be empty (would have no effect). Remove it if no denials are "
        "needed.",
     6, 9},
    {EPH KV("protocol: tcp") KV("enforcement: enforce") KV("path: /x")
         KV("allow_encoded_slash: true"),
     L7 "protocol tcp does not support L7-only fields: enforcement, path, allow_encoded_slash; "
        "remove those fields",
     8, 19},
    {EPH KV("protocol: rest") KV("access: full") KV("path: api/v1"),
     L7 "path must start with '/' or be '**'", 10, 15},
    {EPH KV("protocol: graphql") KV("access: full") KV("persisted_queries: allow"),
     L7 "persisted_queries must be 'deny' or 'allow_registered', got 'allow'", 10, 28},
    {EPH KV("protocol: sql") KV("access: full") KV("enforcement: enforce"),
     L7 "SQL enforcement requires full SQL parsing; use enforcement: audit", 10, 22},
    {EPH KV("protocol: rest") KV("access: full") KV("enforcement: enforce") KV("tls: skip"),
     L7 "tls: skip cannot be enforced (the proxy does not inspect skipped TLS, so the rules "
        "would never apply); use enforcement: audit or remove tls: skip",
     11, 14},
    {EPH KV("protocol: websocket") KV("access: full") KV("tls: skip") KV("enforcement: enforce"),
     L7 "tls: skip cannot be enforced (the proxy does not inspect skipped TLS, so the rules "
        "would never apply); use enforcement: audit or remove tls: skip",
     10, 14},
    {EPH KV("protocol: rest") KV("access: full") KV("mcp: {strict_tool_names: true}"),
     L7 "mcp options are only valid for protocol mcp", 6, 9},
    {EPH KV("protocol: mcp") KV("mcp: {allow_all_known_mcp_methods: true}")
         KV("json_rpc: {max_body_bytes: 1000}"),
     L7 "json_rpc options are not valid for protocol mcp; use mcp.max_body_bytes", 6, 9},
    {EPH KV("protocol: graphql") KV("rules: [{allow: {fields: [viewer]}}]"),
     L7 "rules[0].allow.operation_type must be query, mutation, subscription, or *", 9, 25},
    {EPH KV("protocol: graphql") KV("access: read-only")
         KV("deny_rules: [{operation_type: delete}]"),
     L7 "deny_rules[0].operation_type must be query, mutation, subscription, or *", 10, 39},
    {EPH KV("protocol: graphql") KV("access: read-only")
         KV("graphql_persisted_queries: {abc123: {operation_type: update}}"),
     L7 "graphql_persisted_queries[abc123].operation_type must be query, mutation, or "
        "subscription",
     10, 62},
    /* GraphQL rules (docs/semantics.md#graphql-validation) */
    {EPH KV("protocol: rest") KV("rules: [{allow: {method: GET, path: /, operation_type: query}}]"),
     L7 "rules[0].allow: operation_type, operation_name and fields are GraphQL rule fields; "
        "protocol rest does not match GraphQL operations",
     9, 64},
    {EPH KV("protocol: websocket")
         KV("rules: [{allow: {method: GET, path: /, operation_type: query, fields: [a]}}]"),
     L7 "rules[0].allow mixes method, path or query with operation_type, operation_name or "
        "fields",
     9, 25},
    {EPH KV("protocol: websocket") KV("access: full") KV("deny_rules: [{operation_name: X}]"),
     L7 "deny_rules[0].operation_type must be query, mutation, subscription, or *", 10, 22},
    {EPH KV("protocol: graphql") KV("rules: [{allow: {operation_type: query, method: POST}}]"),
     L7 "rules[0].allow: protocol graphql rules match operations; method, path and query are "
        "not allowed",
     9, 57},
    {EPH KV("protocol: graphql") KV("rules: [{allow: {operation_type: query, fields: []}}]"),
     L7 "rules[0].allow.fields must not be empty", 9, 57},
    {EPH KV("protocol: graphql") KV("access: read-only")
         KV("graphql_persisted_queries: {h1: {operation_type: query, fields: ['v*']}}"),
     L7 "graphql_persisted_queries[h1].fields[0] 'v*' is not a GraphQL name", 10, 74},
    {EPH KV("protocol: graphql") KV("access: read-only")
         KV("graphql_persisted_queries: {h1: {operation_type: '*'}}"),
     L7 "graphql_persisted_queries[h1].operation_type must be query, mutation, or subscription", 10,
     58},
    {EPH KV("protocol: graphql") KV("access: read-only")
         KV("graphql_persisted_queries: {h1: {operation_type: query, operation_name: ''}}"),
     L7 "graphql_persisted_queries[h1].operation_name '' is not a GraphQL name", 10, 81},
    {EPH KV("protocol: rest")
         KV("rules: [{allow: {method: GET, path: /, query: {tag: {any: []}}}}]"),
     L7 "rules[0].allow.query.tag.any: list must not be empty", 9, 67},
    {EPH KV("protocol: rest") KV("access: full")
         KV("deny_rules: [{method: GET, query: {tag: {any: []}}}]"),
     L7 "deny_rules[0].query.tag.any: list must not be empty", 10, 55},

    /* allowed_ips and target_sandbox */
    {EPH KV("allowed_ips: [10.0.0.0/33]"),
     "network policy 'r': endpoint 'a.example.com' has invalid allowed_ips entry '10.0.0.0/33': ",
     8, 23},
    {EPH KV("allowed_ips: [10.0.0.1/8]"),
     "endpoint 'a.example.com' has invalid allowed_ips entry '10.0.0.1/8': ", 8, 23},
    {EPH KV("allowed_ips: [10.0.0.0/8, 127.0.0.0/8]"),
     "network policy 'r': allowed_ips entry 127.0.0.0/8 falls within always-blocked range "
     "(loopback/link-local/unspecified); remove this entry \xe2\x80\x94 SSRF hardening prevents "
     "traffic to these destinations regardless of policy",
     8, 35},
    {EP("port: 80") KV("allowed_ips: [169.254.169.254]"),
     "allowed_ips entry 169.254.169.254 falls within always-blocked range", 7, 23},
    {EPH KV("allowed_ips: ['fe80::/10']"),
     "allowed_ips entry fe80::/10 falls within always-blocked", 8, 23},
    {EPH KV("target_sandbox: 'bad/name'"),
     "network policy 'r': endpoint 'a.example.com' has invalid target_sandbox 'bad/name'; "
     "expected a non-empty name of [A-Za-z0-9._-]",
     8, 25},
    {EPH KV("target_sandbox: ''"), "has invalid target_sandbox ''", 8, 25},
    {EPH KV("target_sandbox: peer") KV("allowed_ips: [10.0.0.0/8]"),
     "network policy 'r': endpoint 'a.example.com': target_sandbox and allowed_ips are mutually "
     "exclusive",
     8, 25},

    /* methods and patterns */
    {EPH KV("protocol: rest") KV("rules: [{allow: {method: 'GE T', path: /}}]"),
     "network policy 'r': invalid method 'GE T'", 9, 34},
    {EPH KV("protocol: rest") KV("access: full") KV("deny_rules: [{method: 'POST/', path: /x}]"),
     "network policy 'r': invalid method 'POST/'", 10, 31},
    {EPH KV("protocol: rest") KV("rules: [{allow: {method: GET, path: '/a/[b'}}]"),
     "network policy 'r': invalid path pattern '/a/[b': ", 9, 45},
    {EPH KV("protocol: rest") KV("access: full") KV("path: '/v1/[x'"),
     "network policy 'r': invalid path pattern '/v1/[x': ", 10, 15},
    {EPH KV("protocol: rest") KV("rules: [{allow: {method: GET, path: /, query: {tag: '[a'}}}]"),
     "network policy 'r': invalid query pattern '[a': unclosed '[' in pattern", 9, 61},
    {EPH KV("protocol: rest") KV("access: full")
         KV("deny_rules: [{method: GET, query: {tag: {any: [ok, 'x{y']}}}]"),
     "network policy 'r': invalid query pattern 'x{y': unclosed '{' in pattern", 10, 60},
};

static void run_neg(const struct neg_row *row)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(row->yaml, d);
    bool ok = model_policy_validate(p, d);
    bool found = false;
    char *s;

    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_msg(d, i), row->msg) != NULL && d->v[i].mark.line == row->line &&
            d->v[i].mark.col == row->col) {
            found = true;
        }
    }
    s = dump_diags(d);
    ck_assert_msg(!ok, "validated, expected '%s'\n%s", row->msg, row->yaml);
    ck_assert_msg(found, "expected at %u:%u: %s\npolicy:\n%sgot:\n%s", (unsigned)row->line,
                  (unsigned)row->col, row->msg, row->yaml, s);
    free(s);
    model_policy_free(p);
    model_diags_free(d);
}

START_TEST(test_negative)
{
    run_neg(&neg_rows[_i]);
}
END_TEST

/* ===========================================================================
 * Positive rows: valid hosts, every valid protocol/access combination
 * ========================================================================= */

static const char *const pos_rows[] = {
    "version: 1\n",
    /* the reference's canonical output writes both, port = ports[0] */
    EP("host: a.example.com") KV("port: 443") KV("ports: [443, 8443]"),
    EP("host: a.example.com") KV("ports: [80, 443]") KV("port: 443"),
    "version: 1\nprocess:\n  run_as_user: sandbox\n  run_as_group: '1000'\n",
    "version: 1\nprocess:\n  run_as_user: '4294967294'\n  run_as_group: '1'\n",
    "version: 1\nfilesystem_policy:\n  include_workdir: true\n  read_only: [/usr, /lib, /etc]\n"
    "  read_write: [/tmp, /sandbox/, /dev/null]\n",
    "version: 1\nfilesystem_policy:\n  read_only: ['/a/..b', '/a..', '/./x']\n",
    /* hosts */
    EPH,
    EP("host: API.Example.COM.") KV("port: 443"),
    EP("host: '*.example.com'") KV("port: 443"),
    EP("host: '**.example.com'") KV("port: 443"),
    EP("host: '*-api.googleapis.com'") KV("port: 443"),
    EP("host: 'a.*.example.com'") KV("port: 443"),
    EP("host: '*.*.example.com'") KV("port: 443"),
    EP("host: '*.example.co.uk'") KV("port: 443"),
    EP("host: 'us-*.api.example.com'") KV("port: 443"),
    EP("host: 10.0.0.1") KV("port: 8080"),
    EP("host: 203.0.113.10") KV("ports: [80, 443]"),
    EP("host: '2001:db8::1'") KV("port: 443"),
    EP("host: '[2001:db8::1]'") KV("port: 443"),
    EP("host: localhost") KV("port: 8000"),
    EP("host: my_service.internal") KV("port: 8000"),
    /* hostless: allowed_ips constrains a non-tcp endpoint */
    EP("port: 443") KV("allowed_ips: [10.0.5.0/24, 192.168.1.10]"),
    EP("host: ''") KV("port: 443") KV("protocol: rest") KV("access: read-only")
        KV("allowed_ips: ['10.0.0.0/8']"),
    EPH KV("allowed_ips: ['fd00::/8', 172.16.0.0/12]"),
    /* ports */
    EP("host: a.example.com") KV("ports: [443, 80, 443, 8443]"),
    EP("host: a.example.com") KV("port: 65535"),
    /* the reference's canonical form: port = ports[0], ports wins */
    EP("host: a.example.com") KV("port: 80") KV("ports: [80, 443]"),
    /* L4 */
    EPH KV("tls: skip"),
    EPH KV("tls: terminate"),
    EPH KV("tls: passthrough"),
    EPH KV("protocol: tcp"),
    EPH KV("protocol: TCP") KV("tls: skip"),
    EP("host: '*.db.example.com'") KV("port: 5432") KV("protocol: tcp"),
    EP("host: '**.example.com'") KV("port: 22") KV("protocol: tcp"),
    EPH KV("protocol: tcp") KV("allowed_ips: [10.0.0.0/8]"),
    EPH KV("allow_uninspected_credentials: true"),
    /* rest */
    EPH KV("protocol: rest") KV("access: read-only"),
    EPH KV("protocol: rest") KV("access: read-write") KV("enforcement: enforce"),
    EPH KV("protocol: rest") KV("access: full") KV("enforcement: audit"),
    EPH KV("protocol: rest") KV("enforcement: enforce")
        KV("rules: [{allow: {method: GET, path: '/repos/**'}}, {allow: {method: post, path: "
           "'/repos/*/issues'}}]"),
    EPH KV("protocol: rest") KV("enforcement: enforce") KV("access: read-write")
        KV("deny_rules: [{method: POST, path: '/repos/*/pulls/*/reviews'}]"),
    EPH KV("protocol: rest") KV("rules: [{allow: {method: '*', path: '**'}}]"),
    EPH KV("protocol: rest")
        KV("rules: [{allow: {method: GET, path: /download, query: {tag: 'foo-*', v: {glob: "
           "'1.*'}, arch: {any: [amd64, arm64]}}}}]"),
    EPH KV("protocol: rest") KV("access: full")
        KV("deny_rules: [{method: DELETE, query: {force: {any: ['true', '1']}}}]"),
    EPH KV("protocol: rest") KV("access: full") KV("path: /api/**"),
    EPH KV("protocol: rest") KV("access: full") KV("path: '**'"),
    EPH KV("protocol: rest") KV("access: full") KV("allow_encoded_slash: true")
        KV("websocket_credential_rewrite: true") KV("request_body_credential_rewrite: true"),
    EPH KV("protocol: rest") KV("access: full") KV("credential_signing: sigv4")
        KV("signing_service: s3") KV("signing_region: us-east-1"),
    EPH KV("protocol: rest") KV("access: full") KV("credential_signing: 'sigv4:no_body'")
        KV("signing_service: execute-api"),
    EPH KV("protocol: REST") KV("access: full") KV("tls: skip"),
    EPH KV("protocol: rest") KV("rules: [{allow: {method: M-SEARCH, path: /}}]"),
    /* websocket */
    EPH KV("protocol: websocket") KV("access: full"),
    EPH KV("protocol: websocket") KV("access: read-write") KV("enforcement: enforce"),
    EPH KV("protocol: websocket")
        KV("rules: [{allow: {method: GET, path: /ws}}, {allow: {method: WEBSOCKET_TEXT, path: "
           "/ws}}]"),
    /* graphql */
    EPH KV("protocol: graphql") KV("access: read-only"),
    EPH KV("protocol: graphql") KV("enforcement: enforce") KV("path: /graphql")
        KV("rules: [{allow: {operation_type: query, fields: [viewer]}}]"),
    EPH KV("protocol: graphql") KV("access: read-write")
        KV("deny_rules: [{operation_type: mutation, operation_name: deleteRepo}]"),
    EPH KV("protocol: graphql") KV("access: read-only") KV("persisted_queries: allow_registered")
        KV("graphql_persisted_queries: {abc: {operation_type: subscription}}")
            KV("graphql_max_body_bytes: 65536"),
    EPH KV("protocol: graphql") KV("access: full") KV("persisted_queries: deny"),
    /* sql */
    EP("host: db.example.com") KV("port: 5432") KV("protocol: sql") KV("access: full")
        KV("enforcement: audit"),
    EP("host: db.example.com") KV("port: 5432") KV("protocol: sql")
        KV("rules: [{allow: {command: SELECT}}]"),
    /* json-rpc and mcp */
    EPH KV("protocol: json-rpc") KV("rules: [{allow: {method: 'tools/call'}}]")
        KV("json_rpc: {max_body_bytes: 1048576}"),
    EPH KV("protocol: mcp") KV("mcp: {allow_all_known_mcp_methods: true}"),
    EPH KV("protocol: mcp") KV("enforcement: enforce")
        KV("rules: [{allow: {method: 'tools/call', tool: 'read_*'}}]")
            KV("deny_rules: [{method: 'tools/call', tool: delete_repo}]")
                KV("mcp: {strict_tool_names: true, max_body_bytes: 4096}"),
    EPH KV("protocol: mcp") KV("deny_rules: [{method: 'tools/call'}]")
        KV("mcp: {allow_all_known_mcp_methods: true}"),
    /* target_sandbox */
    EP("host: peer.sandbox") KV("port: 8080") KV("target_sandbox: agent-b_2.prod"),
    /* several rules, names and binaries */
    "version: 1\nnetwork_policies:\n  b:\n    name: second\n    binaries: [{path: "
    "'/sandbox/.uv/python/**/python3*'}, {path: /usr/bin/git}]\n    endpoints:\n"
    "      - {host: github.com, port: 443}\n  a:\n    binaries: [{path: /usr/bin/curl}]\n"
    "    endpoints:\n      - {host: api.github.com, port: 443, protocol: rest, access: "
    "read-only}\n      - {host: uploads.github.com, ports: [443]}\n",
    "version: 1\nnetwork_policies:\n  nobins:\n    endpoints:\n      - {host: a.example.com, port: "
    "443}\n",
};

START_TEST(test_positive)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(pos_rows[_i], d);
    bool ok = model_policy_validate(p, d);
    char *s = dump_diags(d);

    ck_assert_msg(ok && model_diags_count(d) == 0, "expected valid:\n%sgot:\n%s", pos_rows[_i], s);
    free(s);
    /* A second run on the normalised policy gives the same answer. */
    ck_assert(model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 0);
    /* The normalised policy meets the compiler's preconditions. */
    ck_assert_msg(pv_ok(model_policy_compile(p)), "compile failed: %s", pv_strerror(pv_errno));
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Normalisation
 * ========================================================================= */

static const char norm_yaml[] =
    "version: 1\n"
    "network_policies:\n"
    "  zeta:\n"
    "    binaries: [{path: /usr/bin/curl}]\n"
    "    endpoints:\n"
    "      - host: API.Example.COM.\n"
    "        ports: [8443, 443, 80, 443]\n"
    "        protocol: Rest\n"
    "        enforcement: enforce\n"
    "        rules: [{allow: {method: get, path: /x}}, {allow: {method: '*', path: /y}}]\n"
    "        deny_rules: [{method: delete, path: /x}]\n"
    "  alpha:\n"
    "    binaries: [{path: /usr/bin/curl}]\n"
    "    endpoints:\n"
    "      - port: 8080\n"
    "        tls: skip\n"
    "        protocol: websocket\n"
    "        access: read-only\n"
    "        allowed_ips: [10.0.0.0/8, 192.168.1.1, '2001:db8::/32']\n"
    "  mid:\n"
    "    binaries: [{path: /usr/bin/node}]\n"
    "    endpoints:\n"
    "      - host: mcp.example.com\n"
    "        port: 443\n"
    "        protocol: json-rpc\n"
    "        rules: [{allow: {method: tools/call}}]\n"
    "      - host: sql.example.com\n"
    "        port: 5432\n"
    "        ports: [5433, 5432]\n"
    "        protocol: sql\n"
    "        access: full\n";

START_TEST(test_normalise)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(norm_yaml, d);
    const struct model_endpoint *e;
    char *s;

    ck_assert(model_policy_validate(p, d));
    s = dump_diags(d);
    ck_assert_msg(model_diags_count(d) == 0, "%s", s);
    free(s);

    ck_assert_uint_eq(p->nrules, 3);
    ck_assert_str_eq(p->rules[0].key, "alpha");
    ck_assert_str_eq(p->rules[1].key, "mid");
    ck_assert_str_eq(p->rules[2].key, "zeta");

    e = &p->rules[2].endpoints[0];
    ck_assert_str_eq(e->host.s, "api.example.com");
    ck_assert_uint_eq(e->nports, 3);
    ck_assert_uint_eq(e->ports[0], 80);
    ck_assert_uint_eq(e->ports[1], 443);
    ck_assert_uint_eq(e->ports[2], 8443);
    ck_assert_int_eq(e->proto, MODEL_PROTO_REST);
    ck_assert(e->enforce);
    ck_assert(!e->tls_skip);
    ck_assert_int_eq(e->access_preset, MODEL_ACCESS_NONE);
    ck_assert_str_eq(e->rules[0].method.s, "GET");
    ck_assert_str_eq(e->rules[1].method.s, "*");
    ck_assert_str_eq(e->deny_rules[0].method.s, "DELETE");
    ck_assert_uint_eq(e->ncidrs, 0);

    e = &p->rules[0].endpoints[0];
    ck_assert(e->host.s == NULL || e->host.s[0] == '\0');
    ck_assert_uint_eq(e->nports, 1);
    ck_assert_uint_eq(e->ports[0], 8080);
    ck_assert_int_eq(e->proto, MODEL_PROTO_WEBSOCKET);
    ck_assert(e->tls_skip);
    ck_assert(!e->enforce);
    ck_assert_int_eq(e->access_preset, MODEL_ACCESS_READ_ONLY);
    ck_assert_uint_eq(e->ncidrs, 3);
    ck_assert_uint_eq(e->cidrs[0].prefix, 96 + 8);
    ck_assert_uint_eq(e->cidrs[1].prefix, 128);
    ck_assert_uint_eq(e->cidrs[2].prefix, 32);
    ck_assert(model_cidr_contains(&e->cidrs[1], &e->cidrs[1].net));
    ck_assert(!model_cidr_contains(&e->cidrs[0], &e->cidrs[1].net));

    /* JSON-RPC method names are case-sensitive and kept as written. */
    e = &p->rules[1].endpoints[0];
    ck_assert_int_eq(e->proto, MODEL_PROTO_JSONRPC);
    ck_assert_str_eq(e->rules[0].method.s, "tools/call");
    e = &p->rules[1].endpoints[1];
    ck_assert_int_eq(e->proto, MODEL_PROTO_SQL);
    ck_assert_int_eq(e->access_preset, MODEL_ACCESS_FULL);
    ck_assert_uint_eq(e->nports, 2);
    ck_assert_uint_eq(e->ports[0], 5432);
    ck_assert_uint_eq(e->ports[1], 5433);

    /* Idempotent: validating again changes nothing and leaks nothing. */
    ck_assert(model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 0);
    ck_assert_str_eq(p->rules[2].endpoints[0].host.s, "api.example.com");
    ck_assert_uint_eq(p->rules[2].endpoints[0].nports, 3);
    ck_assert_uint_eq(p->rules[0].endpoints[0].ncidrs, 3);

    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* Rule names: '{name}' is `name` when set, else the key. */
START_TEST(test_display_name)
{
    static const char yaml[] = "version: 1\n"
                               "network_policies:\n"
                               "  my_key:\n"
                               "    name: my-display-name\n"
                               "    binaries: [{path: /usr/bin/curl}]\n"
                               "    endpoints:\n"
                               "      - {host: '*.com', port: 443}\n"
                               "  other_key:\n"
                               "    binaries: [{path: /usr/bin/curl}]\n"
                               "    endpoints:\n"
                               "      - {host: '*.org', port: 443}\n";
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(yaml, d);

    ck_assert(!model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 2);
    /* Rules are checked in key order: my_key, other_key. */
    ck_assert_str_eq(model_diags_msg(d, 0),
                     "network policy 'my-display-name': TLD wildcard '*.com' is not allowed; use "
                     "subdomain wildcards like '*.example.com' instead");
    ck_assert_str_eq(model_diags_msg(d, 1),
                     "network policy 'other_key': TLD wildcard '*.org' is not allowed; use "
                     "subdomain wildcards like '*.example.com' instead");
    ck_assert_uint_eq(d->v[0].mark.line, 7);
    ck_assert_uint_eq(d->v[0].mark.col, 16);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* Every violation is reported, not only the first; the endpoint index in
 * L7 messages counts within the rule. */
START_TEST(test_collects_all)
{
    static const char yaml[] = "version: 3\n"
                               "process: {run_as_user: root}\n"
                               "filesystem_policy: {read_write: [/, tmp]}\n"
                               "network_policies:\n"
                               "  r:\n"
                               "    binaries: [{path: /usr/bin/curl}]\n"
                               "    endpoints:\n"
                               "      - {host: a.example.com, port: 443}\n"
                               "      - {host: '*', port: 443, protocol: rest}\n"
                               "      - {host: b.example.com, allowed_ips: [127.0.0.1]}\n";
    static const char *const want[] = {
        "unsupported policy version 3; expected 1",
        "run_as_user must be 'sandbox'",
        "path must be absolute (start with '/'): tmp",
        "read-write path is overly broad: /",
        "network policy 'r': invalid host wildcard '*'",
        ("network policy 'r': endpoint 1 has invalid L7 configuration: protocol requires rules "
         "or access to define allowed traffic"),
        "network policy 'r': endpoint 'b.example.com' must declare at least one port",
        "network policy 'r': allowed_ips entry 127.0.0.1 falls within always-blocked range",
    };
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(yaml, d);
    char *s;

    ck_assert(!model_policy_validate(p, d));
    s = dump_diags(d);
    ck_assert_msg(model_diags_count(d) == PV_ARRAY_LEN(want), "%s", s);
    for (size_t i = 0; i < PV_ARRAY_LEN(want); i++) {
        ck_assert_msg(strstr(model_diags_msg(d, i), want[i]) != NULL, "#%zu: want %s\n%s", i,
                      want[i], s);
    }
    free(s);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Cases that need generated input or a hand-edited struct
 * ========================================================================= */

static char *gen_fs_yaml(size_t nro, const char *rw_path)
{
    struct pv_dynbuf b;
    pv_dynbuf_init(&b, 1u << 20);
    ck_assert(pv_ok(pv_dynbuf_addstr(&b, "version: 1\nfilesystem_policy:\n  read_only:\n")));
    for (size_t i = 0; i < nro; i++) {
        ck_assert(pv_ok(pv_dynbuf_printf(&b, "    - /p%zu\n", i)));
    }
    if (rw_path != NULL) {
        ck_assert(pv_ok(pv_dynbuf_printf(&b, "  read_write:\n    - %s\n", rw_path)));
    }
    return pv_dynbuf_take(&b, NULL);
}

struct fs_row {
    size_t nro;     /* read_only entries */
    size_t rw_len;  /* 0: no read_write entry; else "/" + 'a' * (rw_len - 1) */
    size_t rw_utf8; /* else: "/" + 75 'a' + this many bytes of 2-byte characters */
    size_t cut;     /* > 0: expect the over-long message showing this many bytes */
    const char *msg;
    uint32_t line, col;
    bool ok;
};

static const struct fs_row fs_rows[] = {
    {256, 0, 0, 0, NULL, 0, 0, true},
    {255, 1, 0, 0, "read-write path is overly broad: /", 260, 7, false},
    {256, 2, 0, 0, "too many filesystem paths (257 > 256)", 3, 3, false},
    {257, 0, 0, 0, "too many filesystem paths (257 > 256)", 3, 3, false},
    {1, 4096, 0, 0, NULL, 0, 0, true},
    {1, 4097, 0, 77, NULL, 6, 7, false},
    /* the 2-byte character at bytes 76-77 straddles the 77-byte cut: the
     * cut backs off to 76 */
    {1, 0, 4200, 76, NULL, 6, 7, false},
};

START_TEST(test_fs_limits)
{
    const struct fs_row *row = &fs_rows[_i];
    char *rw = NULL;
    char *yaml;
    char want[256];
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    bool ok;
    bool found;
    char *s;

    if (row->rw_len > 0) {
        rw = malloc(row->rw_len + 1);
        ck_assert_ptr_nonnull(rw);
        memset(rw, 'a', row->rw_len);
        rw[0] = '/';
        rw[row->rw_len] = '\0';
    } else if (row->rw_utf8 > 0) {
        size_t n = 76 + row->rw_utf8;
        rw = malloc(n + 1);
        ck_assert_ptr_nonnull(rw);
        memset(rw, 'a', 76);
        rw[0] = '/';
        for (size_t i = 76; i + 1 < n; i += 2) {
            rw[i] = (char)0xC3; /* U+00E9 */
            rw[i + 1] = (char)0xA9;
        }
        rw[n] = '\0';
    }
    if (row->cut > 0) {
        (void)snprintf(want, sizeof(want), "path exceeds maximum length (%zu > 4096): %.*s...",
                       strlen(rw), (int)row->cut, rw);
    } else {
        (void)snprintf(want, sizeof(want), "%s", row->msg != NULL ? row->msg : "");
    }
    found = want[0] == '\0';
    yaml = gen_fs_yaml(row->nro, rw);
    p = parse(yaml, d);
    ok = model_policy_validate(p, d);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strcmp(model_diags_msg(d, i), want) == 0 && d->v[i].mark.line == row->line &&
            d->v[i].mark.col == row->col) {
            found = true;
        }
    }
    s = dump_diags(d);
    ck_assert_msg(ok == row->ok, "row %d: validate returned %d\n%s", _i, ok, s);
    ck_assert_msg(found, "row %d: expected %u:%u: %s\n%s", _i, (unsigned)row->line,
                  (unsigned)row->col, want, s);
    free(s);
    free(yaml);
    free(rw);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

START_TEST(test_struct_edits)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = parse(EPH "  s:\n    binaries: [{path: /usr/bin/curl}]\n"
                                       "    endpoints: [{host: b.example.com, port: 80}]\n",
                                   d);

    ck_assert(model_policy_validate(p, d));
    /* Missing version (the parser reports it too; merge-built policies
     * reach here). */
    p->has_version = false;
    ck_assert(!model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_msg(d, 0), "missing required field 'version'");
    p->has_version = true;
    model_diags_free(d);

    /* Duplicate keys cannot come from a YAML map, but can from code. */
    d = model_diags_new();
    free(p->rules[1].key);
    p->rules[1].key = strdup("r");
    ck_assert_ptr_nonnull(p->rules[1].key);
    ck_assert(!model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_msg(d, 0), "duplicate network policy key 'r'");
    model_diags_free(d);

    /* Port 0 written as `port` means "no port"; merge-built endpoints with
     * unsorted duplicate ports are folded. */
    d = model_diags_new();
    free(p->rules[1].key);
    p->rules[1].key = strdup("s");
    ck_assert_ptr_nonnull(p->rules[1].key);
    p->rules[0].endpoints[0].ports[0] = 0;
    ck_assert(!model_policy_validate(p, d));
    ck_assert_uint_eq(model_diags_count(d), 1);
    ck_assert_str_eq(model_diags_msg(d, 0),
                     "network policy 'r': endpoint 'a.example.com' must declare at least one port");
    model_diags_free(d);

    model_policy_free(p);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("model_validate");
    TCase *tc = tcase_create("validate");

    tcase_add_loop_test(tc, test_negative, 0, (int)PV_ARRAY_LEN(neg_rows));
    tcase_add_loop_test(tc, test_positive, 0, (int)PV_ARRAY_LEN(pos_rows));
    tcase_add_loop_test(tc, test_fs_limits, 0, (int)PV_ARRAY_LEN(fs_rows));
    tcase_add_test(tc, test_normalise);
    tcase_add_test(tc, test_display_name);
    tcase_add_test(tc, test_collects_all);
    tcase_add_test(tc, test_struct_edits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(validate_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
