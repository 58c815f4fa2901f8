/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_warn.c - the warnings tier (model_warn.c) and "did you mean"
 *
 * One row per warning with the exact "code@LINE:COL" list it must give, and
 * for each a twin that must NOT warn (the same policy written the way it was
 * meant). The "did you mean" rows check the unknown-field error of the
 * schema walker, with a far-off key that must get no suggestion.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define HEAD "version: 1\nnetwork_policies:\n  r:\n"
#define BIN "    binaries:\n      - path: /usr/bin/git\n"
#define EP "    endpoints:\n      - host: api.github.com\n        port: 443\n"
#define L7R "        protocol: rest\n        enforcement: enforce\n        rules:\n"

static const struct {
    const char *name;
    const char *yaml;
    unsigned flags;
    const char *want; /* "code@line:col;" per warning, in order */
} rows[] = {
    {"l7 audit warns",
     HEAD BIN EP "        protocol: rest\n        enforcement: audit\n"
                 "        access: read-only\n",
     0, "l7-audit@10:22;"},
    {"l7 without enforcement warns at the endpoint",
     HEAD BIN EP "        protocol: rest\n"
                 "        access: read-only\n",
     0, "l7-audit@7:9;"},
    {"l7 enforce does not warn",
     HEAD BIN EP "        protocol: rest\n"
                 "        enforcement: enforce\n        access: read-only\n",
     0, ""},
    {"l4 endpoint does not warn l7-audit", HEAD BIN EP, 0, ""},
    {"wildcard host warns",
     HEAD BIN "    endpoints:\n      - host: '*.github.com'\n"
              "        port: 443\n",
     0, "wildcard-host@7:15;"},
    {"path on l4 warns", HEAD BIN EP "        path: /api/**\n", 0, "path-on-l4@9:15;"},
    {"path on l7 does not warn",
     HEAD BIN EP "        path: /api/**\n        protocol: rest\n"
                 "        enforcement: enforce\n        access: read-only\n",
     0, ""},
    {"rule without binaries warns", HEAD EP, 0, "rule-without-binaries@3:3;"},
    {"relative binary warns", HEAD "    binaries:\n      - path: git\n" EP, 0,
     "binary-relative@5:15;"},
    {"missing literal binary warns with the fs flag",
     HEAD "    binaries:\n      - path: /nonexistent/proviso-test-bin\n" EP, MODEL_WARN_FS,
     "binary-missing@5:15;"},
    {"missing binary does not warn without the fs flag",
     HEAD "    binaries:\n      - path: /nonexistent/proviso-test-bin\n" EP, 0, ""},
    {"glob binary is not looked up", HEAD "    binaries:\n      - path: /nonexistent/**\n" EP,
     MODEL_WARN_FS, ""},
    {"existing binary does not warn", HEAD "    binaries:\n      - path: /bin/sh\n" EP,
     MODEL_WARN_FS, ""},
    {"a misspelled method warns (the rule is dead)",
     HEAD BIN EP L7R "          - allow: {method: GTE, path: /x}\n", 0, "unknown-method@12:29;"},
    {"an unknown method in a deny rule warns",
     HEAD BIN EP L7R "          - allow: {method: GET, path: /x}\n"
                     "        deny_rules:\n          - {method: FROB, path: /y}\n",
     0, "unknown-method@14:22;"},
    {"known methods, any case, and * do not warn",
     HEAD BIN EP L7R "          - allow: {method: get, path: /x}\n"
                     "          - allow: {method: PATCH, path: /x}\n"
                     "          - allow: {method: '*', path: /x}\n",
     0, ""},
    {"websocket GraphQL rules without a GET rule warn (the upgrade is denied)",
     HEAD BIN EP "        protocol: websocket\n        enforcement: enforce\n        rules:\n"
                 "          - allow: {operation_type: subscription}\n",
     0, "graphql-no-upgrade@7:9;"},
    {"websocket GraphQL rules with a GET rule do not warn",
     HEAD BIN EP "        protocol: websocket\n        enforcement: enforce\n        rules:\n"
                 "          - allow: {method: GET, path: /ws}\n"
                 "          - allow: {operation_type: subscription}\n",
     0, ""},
    {"a registry without allow_registered warns",
     HEAD BIN EP "        protocol: graphql\n        enforcement: enforce\n"
                 "        access: read-only\n"
                 "        graphql_persisted_queries: {h1: {operation_type: query}}\n",
     0, "persisted-unused@12:37;"},
    {"a registry under allow_registered does not warn",
     HEAD BIN EP "        protocol: graphql\n        enforcement: enforce\n"
                 "        access: read-only\n        persisted_queries: allow_registered\n"
                 "        graphql_persisted_queries: {h1: {operation_type: query}}\n",
     0, ""},
    {"a REST endpoint without a path beside a scoped graphql endpoint warns (it grants /graphql)",
     HEAD BIN EP "        protocol: rest\n        enforcement: enforce\n        access: read-only\n"
                 "      - host: api.github.com\n        port: 443\n        path: /graphql\n"
                 "        protocol: graphql\n        enforcement: enforce\n"
                 "        access: read-only\n",
     0, "graphql-shadowed@7:9;"},
    {"an L4 endpoint on the same host:port warns too",
     HEAD BIN EP "      - host: api.github.com\n        port: 443\n        path: /graphql\n"
                 "        protocol: graphql\n        enforcement: enforce\n"
                 "        access: read-only\n",
     0, "graphql-shadowed@7:9;"},
    {"a REST endpoint scoped elsewhere, or on another port, does not warn",
     HEAD BIN EP "        path: /repos/**\n        protocol: rest\n        enforcement: enforce\n"
                 "        access: read-only\n"
                 "      - host: api.github.com\n        port: 8443\n"
                 "        protocol: rest\n        enforcement: enforce\n        access: read-only\n"
                 "      - host: api.github.com\n        port: 443\n        path: /graphql\n"
                 "        protocol: graphql\n        enforcement: enforce\n"
                 "        access: read-only\n",
     0, ""},
    {"a link-local IP host warns, in any spelling",
     HEAD BIN "    endpoints:\n      - host: 169.254.169.254\n        port: 80\n"
              "      - host: '64:ff9b::a9fe:a9fe'\n        port: 80\n",
     0, "blocked-host@7:15;blocked-host@9:15;"},
    {"a metadata name warns",
     HEAD BIN "    endpoints:\n      - host: metadata.google.internal\n"
              "        port: 80\n",
     0, "blocked-host@7:15;"},
    {"a private IP host does not warn blocked-host",
     HEAD BIN "    endpoints:\n      - host: 10.0.0.5\n        port: 80\n", 0, ""},
    {"a '?' in an endpoint path and a rule path warns",
     HEAD BIN EP "        path: /a?b\n        protocol: rest\n        enforcement: enforce\n"
                 "        rules:\n          - allow: {method: GET, path: '/x?y=1'}\n"
                 "        deny_rules:\n          - {method: GET, path: '/d?'}\n",
     0, "path-question-mark@9:15;path-question-mark@13:40;path-question-mark@15:33;"},
    {"an mcp endpoint with the method profile and no path warns; with a path, not",
     HEAD BIN EP "        protocol: mcp\n        enforcement: enforce\n"
                 "        mcp: {allow_all_known_mcp_methods: true}\n"
                 "      - host: api.github.com\n        port: 8443\n        path: /mcp\n"
                 "        protocol: mcp\n        enforcement: enforce\n"
                 "        mcp: {allow_all_known_mcp_methods: true}\n"
                 "      - host: api.github.com\n        port: 9443\n"
                 "        protocol: mcp\n        enforcement: enforce\n"
                 "        rules:\n          - allow: {method: tools/list}\n",
     0, "mcp-without-path@7:9;"},
    {"an escaped '?' does not warn",
     HEAD BIN EP L7R "          - allow: {method: GET, path: '/x\\?y'}\n", 0, ""},
    {"a fail_open middleware warns, a fail_closed one is refused (not a warning)",
     "version: 1\nnetwork_middlewares:\n  m:\n    middleware: log\n    on_error: fail_open\n", 0,
     "not-enforced@5:15;"},
    {"credential signing, binding and the uninspected flag warn once each",
     HEAD BIN EP "        protocol: rest\n        enforcement: enforce\n        access: read-only\n"
                 "        credential_signing: sigv4\n        signing_service: s3\n"
                 "        credential_binding: {provider: gh}\n"
                 "        allow_uninspected_credentials: true\n",
     0, "not-enforced@12:29;not-enforced@14:40;not-enforced@7:9;"},
    {"harness: true warns, harness: false does not",
     HEAD "    binaries:\n      - {path: /usr/bin/git, harness: true}\n"
          "      - {path: /usr/bin/gh, harness: false}\n" EP,
     0, "not-enforced@5:9;"},
    {"a rule command warns (SQL is not parsed)",
     HEAD BIN EP "        protocol: sql\n        enforcement: audit\n        rules:\n"
                 "          - allow: {command: SELECT}\n",
     0, "l7-audit@10:22;not-enforced@12:30;"},
    {"WEBSOCKET_TEXT does not warn",
     HEAD BIN EP "        protocol: websocket\n        enforcement: enforce\n        rules:\n"
                 "          - allow: {method: WEBSOCKET_TEXT, path: /ws}\n",
     0, ""},
};

static void collect(void *arg, enum model_warning w, const char *file, uint32_t line, uint32_t col,
                    const char *msg)
{
    char *out = arg;
    size_t l = strlen(out);

    ck_assert_ptr_nonnull(file);
    ck_assert_ptr_nonnull(msg);
    snprintf(out + l, 1024 - l, "%s@%u:%u;", model_warning_code(w), (unsigned)line, (unsigned)col);
}

START_TEST(test_warn)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        model_policy_load("p.yaml", rows[_i].yaml, strlen(rows[_i].yaml), MODEL_FMT_AUTO, d);
    char got[1024] = "";

    ck_assert_msg(p != NULL, "%s: does not load: %s", rows[_i].name,
                  model_diags_count(d) ? model_diags_line(d, 0) : "?");
    model_policy_warnings(p, rows[_i].flags, collect, got);
    ck_assert_msg(strcmp(got, rows[_i].want) == 0, "%s: got '%s', want '%s'", rows[_i].name, got,
                  rows[_i].want);
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

static const struct {
    const char *yaml;
    const char *want; /* substring of the first diagnostic; NULL: must have no suggestion */
} typos[] = {
    {HEAD BIN EP "        enforcment: enforce\n", "(did you mean 'enforcement'?)"},
    {HEAD BIN EP "        protocl: rest\n", "(did you mean 'protocol'?)"},
    {HEAD "    binaires:\n      - path: /usr/bin/git\n" EP, "(did you mean 'binaries'?)"},
    {HEAD "    binary:\n      - path: /usr/bin/git\n" EP, "(did you mean 'binaries'?)"},
    {HEAD "    endpoint:\n      - host: api.github.com\n        port: 443\n" BIN,
     "(did you mean 'endpoints'?)"},
    {HEAD BIN EP "        xyzzy: 1\n", NULL},
    {HEAD BIN EP "        ab: 1\n", NULL},
};

START_TEST(test_did_you_mean)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        model_policy_load("p.yaml", typos[_i].yaml, strlen(typos[_i].yaml), MODEL_FMT_AUTO, d);
    const char *line;

    ck_assert_ptr_null(p);
    ck_assert_uint_ge(model_diags_count(d), 1);
    line = model_diags_line(d, 0);
    ck_assert_ptr_nonnull(strstr(line, "unknown field"));
    if (typos[_i].want != NULL) {
        ck_assert_msg(strstr(line, typos[_i].want) != NULL, "row %d: '%s'", _i, line);
    } else {
        ck_assert_msg(strstr(line, "did you mean") == NULL, "row %d: '%s'", _i, line);
    }
    model_diags_free(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_warn");
    TCase *tc = tcase_create("warn");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_warn, 0, (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_loop_test(tc, test_did_you_mean, 0, (int)(sizeof(typos) / sizeof(typos[0])));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
