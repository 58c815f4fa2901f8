/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_grants.c - the reviewer's view: prover_grants_list and the job
 *
 * Table rows: a baseline, a candidate, and the grant lines the change must
 * list ("+"/"~" binary host:ports route) - including rows that must list
 * nothing (a no-op change, a renamed rule, a narrowing that removes a unit).
 * The job rows go through prover_job_answer, the in-process /v1/prove entry
 * point, and check that the answer carries "grants" under verdict empty.
 */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check_prover_util.h"

#define GH_GET                                                                          \
    "version: 1\nnetwork_policies:\n  gh:\n    binaries:\n      - path: /usr/bin/git\n" \
    "    endpoints:\n      - host: api.github.com\n        port: 443\n"                 \
    "        protocol: rest\n        enforcement: enforce\n        rules:\n"            \
    "          - allow:\n              method: GET\n              path: /repos/**\n"

#define PASTE                                                              \
    "  paste:\n    binaries:\n      - path: /usr/bin/**\n    endpoints:\n" \
    "      - host: '**.pastebin.com'\n        port: 443\n"

static const struct {
    const char *name;
    const char *base; /* NULL: empty baseline */
    const char *cand;
    const char *want; /* the grants, one "C binary host:port route rule;" each */
} rows[] = {
    {"pastebin opaque reach is listed", GH_GET, GH_GET PASTE,
     "+ /usr/bin/** **.pastebin.com:443 opaque paste;"},
    {"no-op change lists nothing", GH_GET, GH_GET, ""},
    {"renamed rule lists nothing", GH_GET,
     "version: 1\nnetwork_policies:\n  github:\n    binaries:\n      - path: /usr/bin/git\n"
     "    endpoints:\n      - host: api.github.com\n        port: 443\n"
     "        protocol: rest\n        enforcement: enforce\n        rules:\n"
     "          - allow:\n              method: GET\n              path: /repos/**\n",
     ""},
    {"removed rule lists nothing", GH_GET PASTE, GH_GET, ""},
    {"widened path is a changed unit", GH_GET,
     GH_GET "          - allow:\n              method: GET\n              path: /orgs/**\n",
     "~ /usr/bin/git api.github.com:443 inspected gh;"},
    {"audit mode is its own route", GH_GET,
     "version: 1\nnetwork_policies:\n  gh:\n    binaries:\n      - path: /usr/bin/git\n"
     "    endpoints:\n      - host: api.github.com\n        port: 443\n"
     "        protocol: rest\n        enforcement: audit\n        rules:\n"
     "          - allow:\n              method: GET\n              path: /repos/**\n",
     "~ /usr/bin/git api.github.com:443 audit gh;"},
    {"a unit repeated in two rules is one grant", GH_GET,
     GH_GET PASTE "  paste2:\n    binaries:\n      - path: /usr/bin/**\n    endpoints:\n"
                  "      - host: '**.pastebin.com'\n        port: 443\n",
     "+ /usr/bin/** **.pastebin.com:443 opaque paste;"},
    {"a binary listed twice is one grant", GH_GET,
     GH_GET "  paste:\n    binaries:\n      - path: /usr/bin/**\n      - path: /usr/bin/**\n"
            "    endpoints:\n      - host: '**.pastebin.com'\n        port: 443\n",
     "+ /usr/bin/** **.pastebin.com:443 opaque paste;"},
    /* One authority is one grant however it is spelt (#grants-once). */
    {"no protocol and tcp are one grant", NULL,
     "version: 1\nnetwork_policies:\n" PASTE "      - host: '**.pastebin.com'\n"
     "        port: 443\n        protocol: tcp\n",
     "+ /usr/bin/** **.pastebin.com:443 opaque paste;"},
    {"tls: skip and enforcement on an L4 endpoint are one grant", NULL,
     "version: 1\nnetwork_policies:\n" PASTE "      - host: '**.pastebin.com'\n"
     "        port: 443\n        tls: skip\n      - host: '**.pastebin.com'\n"
     "        port: 443\n        enforcement: enforce\n",
     "+ /usr/bin/** **.pastebin.com:443 opaque paste;"},
    {"tcp in the candidate changes nothing", GH_GET PASTE, GH_GET PASTE "        protocol: tcp\n",
     ""},
    {"path ** is no path scope", GH_GET PASTE, GH_GET PASTE "        path: '**'\n", ""},
    {"rules in another order or repeated are one grant", NULL,
     GH_GET "          - allow:\n              method: GET\n              path: /orgs/**\n"
            "      - host: api.github.com\n        port: 443\n        protocol: rest\n"
            "        enforcement: enforce\n        rules:\n"
            "          - allow:\n              method: GET\n              path: /orgs/**\n"
            "          - allow:\n              method: GET\n              path: /repos/**\n"
            "          - allow:\n              method: GET\n              path: /orgs/**\n",
     "+ /usr/bin/git api.github.com:443 inspected gh;"},
    {"empty baseline: every unit is new", NULL, GH_GET,
     "+ /usr/bin/git api.github.com:443 inspected gh;"},
};

START_TEST(test_grants)
{
    struct model_policy *b = rows[_i].base != NULL ? tp_policy("base", rows[_i].base) : NULL;
    struct model_policy *c = tp_policy("cand", rows[_i].cand);
    struct prover_grants gs;
    char got[1024] = "";

    ck_assert(pv_ok(prover_grants_list(b, c, NULL, &gs)));
    for (size_t i = 0; i < gs.n; i++) {
        size_t l = strlen(got);
        snprintf(got + l, sizeof(got) - l, "%s %s %s:%u %s %s;", gs.g[i].changed ? "~" : "+",
                 gs.g[i].binary, gs.g[i].host, gs.g[i].nports ? (unsigned)gs.g[i].ports[0] : 0u,
                 gs.g[i].route, gs.g[i].rule);
    }
    ck_assert_msg(strcmp(got, rows[_i].want) == 0, "%s: got '%s', want '%s'", rows[_i].name, got,
                  rows[_i].want);
    prover_grants_free(&gs);
    model_policy_free(b);
    model_policy_free(c);
}
END_TEST

/* A changed unit names the access lines its endpoint gained; the rest of its
 * rule set, and a new unit's, are not marked. */
START_TEST(test_added_access)
{
    struct model_policy *b = tp_policy("base", GH_GET);
    struct model_policy *c = tp_policy(
        "cand", GH_GET
        "          - allow:\n              method: PUT\n              path: /orgs/**\n" PASTE);
    struct prover_grants gs;
    json_t *j;
    char *text;

    ck_assert(pv_ok(prover_grants_list(b, c, NULL, &gs)));
    ck_assert_uint_eq(gs.n, 2);
    ck_assert(!gs.g[0].changed); /* the paste unit sorts first ('*' < 'g') */
    ck_assert_uint_eq(gs.g[0].nadded, 0);
    ck_assert(gs.g[1].changed);
    ck_assert_uint_eq(gs.g[1].naccess, 2);
    ck_assert_uint_eq(gs.g[1].nadded, 1);
    ck_assert_str_eq(gs.g[1].added[0], "PUT /orgs/**");
    j = json_pack("{s:s,s:o}", "verdict", "empty", "grants", prover_grants_json(&gs));
    ck_assert_ptr_nonnull(j);
    ck_assert_ptr_null(
        json_object_get(json_array_get(json_object_get(j, "grants"), 0), "added_access"));
    text = prover_review_text(j, false);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "~ /usr/bin/git -> api.github.com:443 inspected, GET /repos/**, "
                               "PUT /orgs/** (added)  [") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "GET /repos/** (added)") == NULL, "%s", text);
    ck_assert_msg(strstr(text, "all traffic (added)") == NULL, "%s", text);
    free(text);
    json_decref(j);
    prover_grants_free(&gs);
    model_policy_free(b);
    model_policy_free(c);
}
END_TEST

START_TEST(test_grant_details)
{
    struct model_policy *b = tp_policy("base", GH_GET);
    struct model_policy *c = tp_policy(
        "cand", GH_GET "          - allow:\n              method: POST\n"
                       "              path: /orgs/**\n"
                       "  lan:\n    binaries:\n      - path: /usr/bin/curl\n    endpoints:\n"
                       "      - host: db.internal\n        port: 5432\n"
                       "        allowed_ips: ['10.0.0.0/8']\n");
    struct model_credset *cs = tp_creds("- name: github-pat\n  type: github-pat\n"
                                        "  target_hosts: [api.github.com]\n");
    struct prover_grants gs;
    json_t *ans;
    char *text;

    ck_assert(pv_ok(prover_grants_list(b, c, cs, &gs)));
    ck_assert_uint_eq(gs.n, 2);
    /* sorted by binary: curl first */
    ck_assert_str_eq(gs.g[0].binary, "/usr/bin/curl");
    ck_assert_uint_eq(gs.g[0].nprivate, 1);
    ck_assert_str_eq(gs.g[0].private_ips[0], "10.0.0.0/8");
    ck_assert_uint_eq(gs.g[0].ncreds, 0);
    ck_assert_str_eq(gs.g[1].binary, "/usr/bin/git");
    ck_assert_uint_eq(gs.g[1].naccess, 2);
    ck_assert_str_eq(gs.g[1].access[1], "POST /orgs/**");
    ck_assert_uint_eq(gs.g[1].ncreds, 1);
    ck_assert_str_eq(gs.g[1].creds[0], "github-pat");
    ck_assert_uint_eq(gs.g[1].nprivate, 0);
    ans = json_pack("{s:s,s:[s],s:o}", "verdict", "findings", "categories",
                    "private_reach_expansion", "grants", prover_grants_json(&gs));
    text = prover_review_text(ans, false);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "This change grants 1 new unit and 1 changed unit (listed "
                                       "below; 2 of them wide); prover: 1 new finding "
                                       "(private_reach_expansion).\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n+ /usr/bin/curl -> db.internal:5432 opaque, all traffic  "
                                       "[binary: exact, host: exact, route: opaque, methods: all]\n"
                                       "      rule lan; wide: all traffic, not inspected; private "
                                       "destinations: 10.0.0.0/8\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "\n~ /usr/bin/git -> api.github.com:443 inspected, GET "
                     "/repos/**, POST /orgs/** (added)  [binary: exact, host: exact, "
                     "route: inspected, methods: writes]\n"
                     "      rule gh; wide: writes; credentials in scope: github-pat\n"));
    free(text);
    json_decref(ans);
    prover_grants_free(&gs);
    model_credset_free(cs);
    model_policy_free(b);
    model_policy_free(c);
}
END_TEST

/* Breadth (docs/semantics.md#grant-breadth): one rule "r" with binary 'bin'
 * and the endpoint 'ep' (YAML under "      - "), against the empty baseline:
 * the marks "binary host route methods" of its one grant. */
static const struct {
    const char *bin;
    const char *ep;
    const char *want;
} brows[] = {
    /* the change: opaque reach for a directory glob */
    {"/usr/bin/**", "host: '**.pastebin.com'\n        port: 443\n", "glob any-depth opaque all"},
    /* binary: every path, some paths, one path */
    {"/**", "host: api.github.com\n        port: 443\n", "any exact opaque all"},
    {"**", "host: api.github.com\n        port: 443\n", "any exact opaque all"},
    {"/**/*", "host: api.github.com\n        port: 443\n", "any exact opaque all"},
    {"/*/**", "host: api.github.com\n        port: 443\n", "glob exact opaque all"},
    {"/usr/*/git", "host: api.github.com\n        port: 443\n", "glob exact opaque all"},
    {"/usr/bin/git", "host: api.github.com\n        port: 443\n", "exact exact opaque all"},
    {"/usr/bin/python3.1?", "host: api.github.com\n        port: 443\n", "glob exact opaque all"},
    /* host: one label, any depth, only wildcards, IP, hostless */
    {"/usr/bin/git", "host: '*.example.com'\n        port: 443\n", "exact one-label opaque all"},
    {"/usr/bin/git", "host: '*-api.googleapis.com'\n        port: 443\n",
     "exact one-label opaque all"},
    {"/usr/bin/git", "host: 'a.*.example.com'\n        port: 443\n", "exact one-label opaque all"},
    {"/usr/bin/git", "host: '*.*.example.com'\n        port: 443\n", "exact one-label opaque all"},
    {"/usr/bin/git", "host: '**.s3.amazonaws.com'\n        port: 443\n",
     "exact any-depth opaque all"},
    {"/usr/bin/git", "host: 10.1.2.3\n        port: 5432\n", "exact exact opaque all"},
    {"/usr/bin/git", "port: 5432\n        allowed_ips: ['10.0.0.0/8']\n",
     "exact hostless opaque all"},
    /* methods on an inspected route */
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        access: read-only\n",
     "exact exact inspected read-only"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        access: read-write\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        access: full\n",
     "exact exact inspected all"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        rules:\n"
     "          - allow:\n              method: GET\n              path: /a\n"
     "          - allow:\n              method: OPTIONS\n              path: /a\n",
     "exact exact inspected read-only"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        rules:\n"
     "          - allow:\n              method: GET\n              path: /a\n"
     "          - allow:\n              method: DELETE\n              path: /a\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: enforce\n        rules:\n"
     "          - allow:\n              method: '*'\n              path: /a\n",
     "exact exact inspected all"},
    /* websocket: a text frame is a write */
    {"/usr/bin/git",
     "host: ws.example.com\n        port: 443\n        protocol: websocket\n"
     "        enforcement: enforce\n        access: read-write\n",
     "exact exact inspected writes"},
    /* graphql: operation types (docs/semantics.md#grant-breadth); a mutation writes */
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: graphql\n"
     "        enforcement: enforce\n        access: read-write\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: graphql\n"
     "        enforcement: enforce\n        access: read-only\n",
     "exact exact inspected read-only"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: graphql\n"
     "        enforcement: enforce\n        access: full\n",
     "exact exact inspected all"},
    /* a registered mutation under allow_registered writes, even under query rules */
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: graphql\n"
     "        enforcement: enforce\n        persisted_queries: allow_registered\n"
     "        graphql_persisted_queries: {h1: {operation_type: mutation}}\n"
     "        rules: [{allow: {operation_type: query}}, {allow: {operation_type: mutation,"
     " operation_name: X}}]\n",
     "exact exact inspected writes"},
    /* json-rpc and mcp count by the calls they admit (docs/semantics.md#grant-breadth) */
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: json-rpc\n"
     "        enforcement: enforce\n        rules: [{allow: {method: '*'}}]\n",
     "exact exact inspected all"},
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: json-rpc\n"
     "        enforcement: enforce\n        rules: [{allow: {method: eth_call}}]\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: tools/list}},"
     " {allow: {method: initialize}}, {allow: {method: notifications/initialized}}]\n",
     "exact exact inspected read-only"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: tools/list}},"
     " {allow: {method: tools/call, tool: search}}]\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: 'tools/*'}}]\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: resources/subscribe}}]\n",
     "exact exact inspected writes"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: ping}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "exact exact inspected all"},
    {"/usr/bin/git",
     "host: mcp.example.com\n        port: 443\n        protocol: mcp\n"
     "        enforcement: enforce\n        rules: [{allow: {method: tools/call, tool: a}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "exact exact inspected writes"},
    /* audit mode passes every request, whatever the rules say */
    {"/usr/bin/git",
     "host: api.github.com\n        port: 443\n        protocol: rest\n"
     "        enforcement: audit\n        access: read-only\n",
     "exact exact audit all"},
};

START_TEST(test_breadth)
{
    char yaml[1024];
    struct model_policy *c;
    struct prover_grants gs;
    char got[128];
    json_t *j;
    json_t *b;

    snprintf(yaml, sizeof(yaml),
             "version: 1\nnetwork_policies:\n  r:\n    binaries:\n      - path: '%s'\n"
             "    endpoints:\n      - %s",
             brows[_i].bin, brows[_i].ep);
    c = tp_policy("cand", yaml);
    ck_assert(pv_ok(prover_grants_list(NULL, c, NULL, &gs)));
    ck_assert_uint_eq(gs.n, 1);
    snprintf(got, sizeof(got), "%s %s %s %s", gs.g[0].breadth.binary, gs.g[0].breadth.host,
             gs.g[0].breadth.route, gs.g[0].breadth.methods);
    ck_assert_msg(strcmp(got, brows[_i].want) == 0, "%s / %s: got '%s', want '%s'", brows[_i].bin,
                  brows[_i].ep, got, brows[_i].want);
    /* the JSON carries the same four words */
    j = prover_grants_json(&gs);
    b = json_object_get(json_array_get(j, 0), "breadth");
    ck_assert_uint_eq(json_object_size(b), 4);
    snprintf(got, sizeof(got), "%s %s %s %s", json_string_value(json_object_get(b, "binary")),
             json_string_value(json_object_get(b, "host")),
             json_string_value(json_object_get(b, "route")),
             json_string_value(json_object_get(b, "methods")));
    ck_assert_str_eq(got, brows[_i].want);
    json_decref(j);
    prover_grants_free(&gs);
    model_policy_free(c);
}
END_TEST

/* The headline is a sentence that never hides a grant: rows of (grants,
 * verdict) and the first line it must read as. */
static const struct {
    const char *answer; /* JSON */
    bool policy;
    const char *want;
} hrows[] = {
    {"{\"verdict\":\"empty\",\"categories\":[],\"grants\":[{\"change\":\"new\",\"rule\":"
     "\"paste\",\"binary\":\"/usr/bin/**\",\"host\":\"**.pastebin.com\",\"ports\":[443],"
     "\"route\":\"opaque\",\"access\":[\"all traffic\"],\"breadth\":{\"binary\":\"glob\","
     "\"host\":\"any-depth\",\"route\":\"opaque\",\"methods\":\"all\"}}]}",
     false,
     "This change grants 1 new unit: /usr/bin/** -> **.pastebin.com:443 opaque, wide: any binary "
     "under /usr/bin, any subdomain of pastebin.com at any depth, all traffic, not inspected; "
     "prover: no new findings.\n\n+ /usr/bin/** -> **.pastebin.com:443 opaque, all traffic  "
     "[binary: glob, host: any-depth, route: opaque, methods: all]\n      rule paste; wide: any "
     "binary under /usr/bin, any subdomain of pastebin.com at any depth, all traffic, not "
     "inspected\n"},
    /* each dimension in words: a binary directly in a folder, a one-label
     * host, every method; a narrow grant gets no words */
    {"{\"verdict\":\"empty\",\"grants\":[{\"rule\":\"w\",\"binary\":\"/opt/bin/*\","
     "\"host\":\"*.example.com\",\"ports\":[443],\"route\":\"inspected\",\"access\":["
     "\"every method on /v1/**\"],\"breadth\":{\"binary\":\"glob\",\"host\":\"one-label\","
     "\"route\":\"inspected\",\"methods\":\"all\"}},{\"rule\":\"n\",\"binary\":\"/usr/bin/git\","
     "\"host\":\"api.github.com\",\"ports\":[443],\"route\":\"inspected\",\"access\":["
     "\"GET on every path\"],\"breadth\":{\"binary\":\"exact\",\"host\":\"exact\",\"route\":"
     "\"inspected\",\"methods\":\"read-only\"}}]}",
     false,
     "This change grants 2 new units (listed below; 1 of them wide); prover: no new findings.\n\n"
     "+ /opt/bin/* -> *.example.com:443 inspected, every method on /v1/**  [binary: glob, host: "
     "one-label, route: inspected, methods: all]\n      rule w; wide: any binary directly in "
     "/opt/bin, any one-label subdomain of example.com, every method\n+ /usr/bin/git -> "
     "api.github.com:443 inspected, GET on every path  [binary: exact, host: exact, route: "
     "inspected, methods: read-only]\n      rule n\n"},
    /* every operation of a GraphQL unit in its own words */
    {"{\"verdict\":\"empty\",\"grants\":[{\"rule\":\"q\",\"binary\":\"/usr/bin/gh\",\"host\":"
     "\"api.github.com\",\"ports\":[443],\"route\":\"inspected\",\"access\":[\"GraphQL any "
     "operation\"],\"breadth\":{\"binary\":\"exact\",\"host\":\"exact\",\"route\":"
     "\"inspected\",\"methods\":\"all\"}}]}",
     false,
     "This change grants 1 new unit: /usr/bin/gh -> api.github.com:443 inspected, wide: every "
     "GraphQL operation; prover: no new findings.\n\n+ /usr/bin/gh -> api.github.com:443 "
     "inspected, GraphQL any operation  [binary: exact, host: exact, route: inspected, methods: "
     "all]\n      rule q; wide: every GraphQL operation\n"},
    /* any binary, any host, audit mode; a host glob that is not a suffix */
    {"{\"verdict\":\"empty\",\"grants\":[{\"rule\":\"a\",\"binary\":\"/**\",\"host\":\"*\","
     "\"ports\":[80],\"route\":\"audit\",\"breadth\":{\"binary\":\"any\",\"host\":"
     "\"any-depth\",\"route\":\"audit\",\"methods\":\"all\"}}]}",
     false,
     "This change grants 1 new unit: /** -> *:80 audit, wide: any binary, any host, every request "
     "(audit mode: logged, not enforced); prover: no new findings.\n\n+ /** -> *:80 audit  "
     "[binary: any, host: any-depth, route: audit, methods: all]\n      rule a; wide: any binary, "
     "any host, every request (audit mode: logged, not enforced)\n"},
    {"{\"verdict\":\"empty\",\"grants\":[{\"rule\":\"g\",\"binary\":\"/usr/bin/{a,b}\","
     "\"host\":\"api-*.example.com\",\"ports\":[443],\"route\":\"inspected\",\"breadth\":{"
     "\"binary\":\"glob\",\"host\":\"one-label\",\"route\":\"inspected\",\"methods\":"
     "\"writes\"}}]}",
     false,
     "This change grants 1 new unit: /usr/bin/{a,b} -> api-*.example.com:443 inspected, wide: any "
     "binary matching /usr/bin/{a,b}, any host matching api-*.example.com (each * within one "
     "label), writes; prover: no new findings.\n\n+ /usr/bin/{a,b} -> api-*.example.com:443 "
     "inspected  [binary: glob, host: one-label, route: inspected, methods: writes]\n      rule g; "
     "wide: any binary matching /usr/bin/{a,b}, any host matching api-*.example.com (each * within "
     "one label), writes\n"},
    /* negative: no grant is said as such, and only then */
    {"{\"verdict\":\"empty\",\"categories\":[],\"grants\":[]}", false,
     "This change grants no new or changed unit; prover: no new findings.\n"},
    {"{\"verdict\":\"unknown\",\"reason_code\":\"timeout\",\"grants\":[{\"change\":"
     "\"changed\",\"rule\":\"r\",\"binary\":\"/b\",\"host\":\"*\",\"ports\":[5432],"
     "\"route\":\"opaque\",\"access\":[\"all traffic\"],\"private_destinations\":"
     "[\"10.0.0.0/8\"]}]}",
     false,
     "This change grants 1 changed unit: /b -> *:5432 opaque; prover: undecided (timeout), so "
     "not approvable automatically.\n\n~ /b -> *:5432 opaque, all traffic\n      rule r; "
     "private destinations: 10.0.0.0/8\n"},
    {"{\"verdict\":\"empty\",\"grants\":[{\"binary\":\"/a\"},{\"binary\":\"/b\"}]}", true,
     "This policy grants 2 units (listed below); prover: no new findings.\n\n+ /a -> *:* ?\n"
     "      rule -\n+ /b -> *:* ?\n      rule -\n"},
};

START_TEST(test_headline)
{
    json_t *a = json_loads(hrows[_i].answer, 0, NULL);
    char *text;

    ck_assert_ptr_nonnull(a);
    text = prover_review_text(a, hrows[_i].policy);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, hrows[_i].want);
    /* never "nothing new" beside a grant */
    ck_assert_ptr_null(strstr(text, "nothing new"));
    free(text);
    json_decref(a);
}
END_TEST

/* The in-process /v1/prove entry point: verdict empty, and still the grant. */
START_TEST(test_job_answer_grants)
{
    struct prover_session *s = prover_session_new();
    json_t *body = json_pack("{s:s,s:s}", "baseline", GH_GET, "candidate", GH_GET PASTE);
    char *text = json_dumps(body, 0);
    struct prover_answer a;
    json_t *g;

    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(text);
    prover_job_answer(s, PROVER_JOB_PROVE, text, strlen(text), NULL, &a);
    ck_assert_uint_eq(a.status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(a.body, "verdict")), "empty");
    g = json_object_get(a.body, "grants");
    ck_assert_uint_eq(json_array_size(g), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(g, 0), "host")),
                     "**.pastebin.com");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(g, 0), "route")), "opaque");
    prover_answer_free(&a);
    /* negative: a body that does not decode is the service's 400, no grants */
    prover_job_answer(s, PROVER_JOB_PROVE, "{\"candidate\":", 13, NULL, &a);
    ck_assert_uint_eq(a.status, 400);
    ck_assert_str_eq(json_string_value(json_object_get(a.body, "error")), "invalid_json");
    ck_assert_str_eq(json_string_value(json_object_get(a.body, "verdict")), "invalid");
    ck_assert_ptr_null(json_object_get(a.body, "grants"));
    prover_answer_free(&a);
    /* negative: an invalid candidate is a 400 with its location */
    prover_job_answer(s, PROVER_JOB_PROVE, "{\"candidate\":\"version: [\"}", 26, NULL, &a);
    ck_assert_uint_eq(a.status, 400);
    ck_assert_str_eq(json_string_value(json_object_get(a.body, "error")), "invalid_policy");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(a.body, "detail")), "candidate:"));
    prover_answer_free(&a);
    /* check answers carry no grants */
    free(text);
    json_decref(body);
    body = json_pack("{s:s,s:s}", "boundary", GH_GET, "candidate", GH_GET);
    text = json_dumps(body, 0);
    prover_job_answer(s, PROVER_JOB_CHECK, text, strlen(text), NULL, &a);
    ck_assert_uint_eq(a.status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(a.body, "verdict")), "within");
    ck_assert_ptr_null(json_object_get(a.body, "grants"));
    prover_answer_free(&a);
    free(text);
    json_decref(body);
    prover_session_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_grants");
    TCase *tc = tcase_create("grants");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_grants, 0, (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_loop_test(tc, test_breadth, 0, (int)(sizeof(brows) / sizeof(brows[0])));
    tcase_add_loop_test(tc, test_headline, 0, (int)(sizeof(hrows) / sizeof(hrows[0])));
    tcase_add_test(tc, test_grant_details);
    tcase_add_test(tc, test_added_access);
    tcase_add_test(tc, test_job_answer_grants);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    prover_finalize();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
