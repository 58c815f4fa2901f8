/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_eval.c - unit tests of the concrete evaluator (model_eval.c)
 *
 * One table of requests against policies written as YAML and loaded through
 * model_policy_load(): every clause of docs/semantics.md with rows that must
 * allow and rows that must deny, and the matching acceptance vectors of
 * the reference's proxy acceptance table (numbered "V<n>" in the row names; where proviso
 * diverges the row says "ours"). Separate tests cover load-time errors, the
 * compile step (preset expansion, recompilation), resolved target_sandbox
 * endpoints, the scan fallback for requests with many candidates, and the
 * name tables.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_int.h"

/* ===========================================================================
 * Policies
 * ========================================================================= */

#define HDR "version: 1\nnetwork_policies:\n"
#define CURL "    binaries:\n      - path: /usr/bin/curl\n"

static const char P_NONE[] = "version: 1\n";

static const char P_API[] = HDR "  api:\n"
                                "    endpoints:\n"
                                "      - host: api.example.com\n"
                                "        port: 443\n" CURL;

static const char P_WILD[] = HDR "  wild:\n"
                                 "    endpoints:\n"
                                 "      - host: '*.EXAMPLE.COM'\n"
                                 "        port: 443\n" CURL;

/* Accepted by the validator; docs/reference-compat.md#semantics says why it must never match IPs. */
static const char P_TENSTAR[] = HDR "  tenstar:\n"
                                    "    endpoints:\n"
                                    "      - host: '10.*.*.*'\n"
                                    "        port: 443\n" CURL;

static const char P_INTRA[] = HDR "  vertex:\n"
                                  "    endpoints:\n"
                                  "      - host: '*-aiplatform.googleapis.com'\n"
                                  "        port: 443\n" CURL;

static const char P_DSTAR[] = HDR "  deep:\n"
                                  "    endpoints:\n"
                                  "      - host: '**.example.com'\n"
                                  "        port: 443\n" CURL;

static const char P_BINGLOB[] = HDR "  bins:\n"
                                    "    endpoints:\n"
                                    "      - host: api.example.com\n"
                                    "        port: 443\n"
                                    "    binaries:\n"
                                    "      - path: /usr/bin/*\n"
                                    "      - path: /usr/lib/node_modules/**/node\n"
                                    "      - path: /opt/[x]/tool\n";

static const char P_MYTOOL[] = HDR "  tool:\n"
                                   "    endpoints:\n"
                                   "      - host: api.example.com\n"
                                   "        port: 443\n"
                                   "    binaries:\n"
                                   "      - path: /usr/local/bin/my-tool\n";

static const char P_EMPTYBIN[] = HDR "  nobody:\n"
                                     "    endpoints:\n"
                                     "      - host: api.example.com\n"
                                     "        port: 443\n"
                                     "    binaries: []\n";

static const char P_TWO_RULES[] = HDR "  b_rule:\n"
                                      "    endpoints:\n"
                                      "      - host: api.example.com\n"
                                      "        port: 443\n" CURL "  a_rule:\n"
                                      "    name: first\n"
                                      "    endpoints:\n"
                                      "      - host: api.example.com\n"
                                      "        ports: [443, 8443]\n" CURL;

static const char P_HOSTLESS[] = HDR "  lan:\n"
                                     "    endpoints:\n"
                                     "      - port: 8080\n"
                                     "        protocol: rest\n"
                                     "        enforcement: enforce\n"
                                     "        access: full\n"
                                     "        allowed_ips: [10.0.5.0/24]\n" CURL;

static const char P_ALLOWED_IPS[] = HDR "  svc:\n"
                                        "    endpoints:\n"
                                        "      - host: my-service.corp.net\n"
                                        "        port: 8080\n"
                                        "        allowed_ips: [10.0.5.0/24]\n" CURL;

static const char P_CORP_WILD[] = HDR "  corp:\n"
                                      "    endpoints:\n"
                                      "      - host: '*.corp.net'\n"
                                      "        port: 443\n" CURL;

static const char P_CORP_EXACT[] = HDR "  corp:\n"
                                       "    endpoints:\n"
                                       "      - host: svc.corp.net\n"
                                       "        port: 443\n" CURL;

static const char P_METADATA_IP[] = HDR "  meta:\n"
                                        "    endpoints:\n"
                                        "      - host: 169.254.169.254\n"
                                        "        port: 80\n" CURL;

static const char P_METADATA_NAME[] = HDR "  meta:\n"
                                          "    endpoints:\n"
                                          "      - host: metadata.google.internal\n"
                                          "        port: 80\n" CURL;

static const char P_CTRL_IP[] = HDR "  k8s:\n"
                                    "    endpoints:\n"
                                    "      - host: 203.0.113.10\n"
                                    "        port: 6443\n" CURL;

static const char P_CTRL_DNS[] = HDR "  etcd:\n"
                                     "    endpoints:\n"
                                     "      - host: etcd.example.com\n"
                                     "        port: 2379\n"
                                     "      - host: k8s.example.com\n"
                                     "        port: 6443\n"
                                     "        allowed_ips: [10.0.0.0/8]\n" CURL;

static const char P_LAN_IP[] = HDR "  lanip:\n"
                                   "    endpoints:\n"
                                   "      - host: 192.168.1.100\n"
                                   "        port: 8567\n"
                                   "      - host: fd00::1\n"
                                   "        port: 8443\n" CURL;

static const char P_LAN_IP_ADVISOR[] = HDR "  lanip:\n"
                                           "    endpoints:\n"
                                           "      - host: 192.168.1.100\n"
                                           "        port: 8567\n"
                                           "        advisor_proposed: true\n" CURL;

static const char P_REST[] = HDR "  repos:\n"
                                 "    endpoints:\n"
                                 "      - host: api.example.com\n"
                                 "        port: 8080\n"
                                 "        protocol: rest\n"
                                 "        enforcement: enforce\n"
                                 "        rules:\n"
                                 "          - allow: {method: GET, path: '/repos/**'}\n"
                                 "          - allow: {method: POST, path: '/repos/*/issues'}\n"
                                 "          - allow: {method: '*', path: /any}\n" CURL;

static const char P_RO[] = HDR "  ro:\n"
                               "    endpoints:\n"
                               "      - host: ro.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: read-only\n"
                               "      - host: rw.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: read-write\n"
                               "      - host: full.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: full\n" CURL;

static const char P_AUDIT[] = HDR "  aud:\n"
                                  "    endpoints:\n"
                                  "      - host: full.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: audit\n"
                                  "        access: full\n"
                                  "      - host: implicit.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        rules:\n"
                                  "          - allow: {method: GET, path: /x}\n"
                                  "        deny_rules:\n"
                                  "          - {method: GET, path: /x}\n"
                                  "      - host: explicit.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: audit\n"
                                  "        rules:\n"
                                  "          - allow: {method: GET, path: /x}\n" CURL;

static const char P_DENY[] = HDR "  gh:\n"
                                 "    endpoints:\n"
                                 "      - host: api.github.com\n"
                                 "        port: 443\n"
                                 "        protocol: rest\n"
                                 "        enforcement: enforce\n"
                                 "        access: read-write\n"
                                 "        deny_rules:\n"
                                 "          - {method: POST, path: '/repos/*/pulls/*/reviews'}\n"
                                 "      - host: prot.example.com\n"
                                 "        port: 443\n"
                                 "        protocol: rest\n"
                                 "        enforcement: enforce\n"
                                 "        access: full\n"
                                 "        deny_rules:\n"
                                 "          - {method: GET, path: /protected}\n"
                                 "          - method: POST\n"
                                 "            path: /force\n"
                                 "            query: {force: 'true'}\n" CURL;

static const char P_DENY_ACROSS[] =
    HDR "  a_l4:\n"
        "    endpoints:\n"
        "      - host: api.example.com\n"
        "        port: 443\n" CURL "  b_l7:\n"
        "    endpoints:\n"
        "      - host: api.example.com\n"
        "        port: 443\n"
        "        protocol: rest\n"
        "        enforcement: enforce\n"
        "        access: full\n"
        "        deny_rules:\n"
        "          - {method: DELETE, path: '/**'}\n" CURL "  c_audit:\n"
        "    endpoints:\n"
        "      - host: api.example.com\n"
        "        port: 443\n"
        "        protocol: rest\n"
        "        enforcement: audit\n"
        "        access: full\n"
        "        deny_rules:\n"
        "          - {method: PUT, path: '/**'}\n" CURL "  d_wget:\n"
        "    endpoints:\n"
        "      - host: api.example.com\n"
        "        port: 443\n"
        "        protocol: rest\n"
        "        enforcement: enforce\n"
        "        access: full\n"
        "        deny_rules:\n"
        "          - {method: GET, path: '/**'}\n"
        "    binaries:\n"
        "      - path: /usr/bin/wget\n";

static const char P_QUERY[] = HDR "  dl:\n"
                                  "    endpoints:\n"
                                  "      - host: dl.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        rules:\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /download\n"
                                  "              query: {tag: 'foo-*'}\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /v\n"
                                  "              query: {v: '*'}\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /any\n"
                                  "              query:\n"
                                  "                tag: {any: ['a*', 'b*']}\n"
                                  "                ver: {glob: 'v*'}\n" CURL;

static const char P_SLASH[] = HDR "  sl:\n"
                                  "    endpoints:\n"
                                  "      - host: plain.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "      - host: slash.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "        allow_encoded_slash: true\n" CURL;

static const char P_UNSUP[] = HDR "  gql:\n"
                                  "    endpoints:\n"
                                  "      - host: gql.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: graphql\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "      - host: gqlaudit.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: graphql\n"
                                  "        access: full\n"
                                  "      - host: mcp.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: mcp\n"
                                  "        enforcement: enforce\n"
                                  "        mcp: {allow_all_known_mcp_methods: true}\n"
                                  "      - host: mixed.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: graphql\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "      - host: mixed.example.com\n"
                                  "        port: 443\n" CURL;

static const char P_SCOPE[] = HDR "  scoped:\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n"
                                  "        path: '/v1/**'\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n"
                                  "        path: /graphql\n"
                                  "        protocol: graphql\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n" CURL;

static const char P_TLS_SKIP[] = HDR "  skip:\n"
                                     "    endpoints:\n"
                                     "      - host: api.example.com\n"
                                     "        port: 443\n"
                                     "        protocol: rest\n"
                                     "        tls: skip\n"
                                     "        enforcement: audit\n"
                                     "        access: read-only\n"
                                     "        deny_rules: [{method: DELETE, path: \"**\"}]\n" CURL;

static const char P_WS[] = HDR "  ws:\n"
                               "    endpoints:\n"
                               "      - host: ro.example.com\n"
                               "        port: 443\n"
                               "        protocol: websocket\n"
                               "        enforcement: enforce\n"
                               "        access: read-only\n"
                               "      - host: rw.example.com\n"
                               "        port: 443\n"
                               "        protocol: websocket\n"
                               "        enforcement: enforce\n"
                               "        access: read-write\n" CURL;

static const char P_IDENT[] = HDR "  curl_l4:\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n" CURL "  py_l7:\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: full\n"
                                  "        deny_rules:\n"
                                  "          - {method: GET, path: /secret}\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/python3\n";

static const char P_SANDBOX[] = HDR "  peer:\n"
                                    "    endpoints:\n"
                                    "      - host: peer.internal.example\n"
                                    "        port: 8080\n"
                                    "        target_sandbox: peer-1\n" CURL;

static const char P_PORTS[] = HDR "  multi:\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        ports: [8443, 80, 443]\n" CURL;

/* ===========================================================================
 * The table
 * ========================================================================= */

#define ANY (-1)
#define ALLOW 1, 1
#define DENY 0, 0
#define DENY_GRANTED 0, 1
#define R(x) MODEL_REASON_##x
#define RT(x) MODEL_ROUTE_##x

struct erow {
    const char *name;
    const char *policy;
    const char *bins[4]; /* NULL-terminated identity */
    const char *host;
    uint16_t port;
    const char *method; /* NULL: connection-level */
    const char *target;
    const char *ip; /* NULL: destination not resolved */
    int allow;
    int grant;
    enum model_reason reason;
    int route;          /* enum model_route, or ANY */
    const char *rule;   /* expected rule key; NULL: unchecked; "": no rule */
    const char *detail; /* expected substring of the detail; NULL: unchecked */
};

#define C_ "/usr/bin/curl"

static const struct erow rows[] = {
    /* --- reach, hosts, acceptance vectors 1-15 ----------------------------- */
    {"V1 exact host allowed",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "93.184.216.34",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     ""},
    {"V3 wrong port",
     P_API,
     {C_},
     "api.example.com",
     80,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     "endpoint api.example.com:80 is not allowed by any policy"},
    {"V5 no policies",
     P_NONE,
     {C_},
     "x.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_POLICY),
     RT(NONE),
     "",
     "network connections not allowed by policy"},
    {"V7 wildcard subdomain",
     P_WILD,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "wild",
     NULL},
    {"V9 wildcard deep subdomain",
     P_WILD,
     {C_},
     "deep.sub.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"wildcard never matches the apex",
     P_WILD,
     {C_},
     "example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"wildcard never matches an IP host",
     P_WILD,
     {C_},
     "93.184.216.34",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"(ours) 10.*.*.* never matches a dotted quad",
     P_TENSTAR,
     {C_},
     "10.0.0.5",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"(ours) 10.*.*.* never matches a decimal IP",
     P_TENSTAR,
     {C_},
     "167772165",
     443,
     NULL,
     NULL,
     "10.0.0.5",
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"10.*.*.* matches a DNS name",
     P_TENSTAR,
     {C_},
     "10.a.b.c",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "tenstar",
     NULL},
    {"10.*.*.* label count",
     P_TENSTAR,
     {C_},
     "10.a.b.c.d",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"V11 intra-label wildcard",
     P_INTRA,
     {C_},
     "us-central1-aiplatform.googleapis.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "vertex",
     NULL},
    {"V11 intra-label wildcard, dot",
     P_INTRA,
     {C_},
     "us-central1.aiplatform.googleapis.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"V13 pattern case-insensitive",
     P_WILD,
     {C_},
     "API.Example.COM",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "wild",
     NULL},
    {"V15 (ours) trailing dot normalised",
     P_API,
     {C_},
     "api.example.com.",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"host upper case and trailing dot",
     P_API,
     {C_},
     "API.EXAMPLE.COM.",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"two trailing dots invalid",
     P_API,
     {C_},
     "api.example.com..",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BAD_HOST),
     RT(NONE),
     "",
     NULL},
    {"empty label invalid",
     P_API,
     {C_},
     "api..example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BAD_HOST),
     RT(NONE),
     "",
     NULL},
    {"space in host invalid",
     P_API,
     {C_},
     "api example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BAD_HOST),
     RT(NONE),
     "",
     NULL},
    {"percent in host invalid",
     P_WILD,
     {C_},
     "evil%2eexample.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BAD_HOST),
     RT(NONE),
     "",
     NULL},
    {"empty host invalid",
     P_API,
     {C_},
     "",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BAD_HOST),
     RT(NONE),
     "",
     NULL},
    {"other host",
     P_API,
     {C_},
     "api.example.org",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"suffix of exact host",
     P_API,
     {C_},
     "xapi.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"** one label",
     P_DSTAR,
     {C_},
     "a.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "deep",
     NULL},
    {"** two labels",
     P_DSTAR,
     {C_},
     "a.b.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "deep",
     NULL},
    {"** not the apex",
     P_DSTAR,
     {C_},
     "example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"ports list, third port",
     P_PORTS,
     {C_},
     "api.example.com",
     8443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "multi",
     NULL},
    {"ports list, first port",
     P_PORTS,
     {C_},
     "api.example.com",
     80,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "multi",
     NULL},
    {"ports list, unlisted port",
     P_PORTS,
     {C_},
     "api.example.com",
     8080,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"port 0",
     P_PORTS,
     {C_},
     "api.example.com",
     0,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"smallest rule key reported",
     P_TWO_RULES,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "a_rule",
     NULL},
    {"second rule's extra port",
     P_TWO_RULES,
     {C_},
     "api.example.com",
     8443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "a_rule",
     NULL},
    {"binary denial names every rule",
     P_TWO_RULES,
     {"/usr/bin/wget"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "a_rule",
     "binary '/usr/bin/wget' not allowed in policy 'first'; binary '/usr/bin/wget' not allowed "
     "in policy 'b_rule'"},

    /* --- binaries and identity --------------------------------------------- */
    {"wrong binary",
     P_API,
     {"/usr/bin/wget"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "api",
     "binary '/usr/bin/wget' not allowed in policy 'api'"},
    {"empty identity",
     P_API,
     {NULL},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "api",
     NULL},
    {"ancestor grants",
     P_API,
     {"/usr/bin/python3", C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"no ancestor matches",
     P_API,
     {"/usr/bin/python3", "/bin/sh"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "api",
     "binary '/usr/bin/python3'"},
    {"V17 glob * stays in one segment",
     P_BINGLOB,
     {"/usr/bin/subdir/node"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "bins",
     NULL},
    {"glob * in segment",
     P_BINGLOB,
     {"/usr/bin/node"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "bins",
     NULL},
    {"glob ** crosses segments",
     P_BINGLOB,
     {"/usr/lib/node_modules/a/b/node"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "bins",
     NULL},
    {"glob ** wrong prefix",
     P_BINGLOB,
     {"/usr/lib/other/a/node"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "bins",
     NULL},
    {"binary pattern matched exactly",
     P_BINGLOB,
     {"/opt/[x]/tool"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "bins",
     NULL},
    {"binary pattern matched as glob",
     P_BINGLOB,
     {"/opt/x/tool"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "bins",
     NULL},
    {"binary class mismatch",
     P_BINGLOB,
     {"/opt/y/tool"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "bins",
     NULL},
    {"V19 cmdline path never counts",
     P_MYTOOL,
     {"/usr/bin/node"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "tool",
     NULL},
    {"exact binary",
     P_MYTOOL,
     {"/usr/local/bin/my-tool"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "tool",
     NULL},
    {"binary prefix is not a match",
     P_MYTOOL,
     {"/usr/local/bin/my-tool2"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "tool",
     NULL},
    {"empty binaries list matches nothing",
     P_EMPTYBIN,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     "nobody",
     NULL},
    {"identity rule: L4 ancestor allows what L7 exe denies",
     P_IDENT,
     {"/usr/bin/python3", C_},
     "api.example.com",
     443,
     "GET",
     "/secret",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "curl_l4",
     NULL},
    {"identity rule: L7 exe alone, deny rule",
     P_IDENT,
     {"/usr/bin/python3"},
     "api.example.com",
     443,
     "GET",
     "/secret",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "py_l7",
     "GET /secret blocked by deny rule"},
    {"identity rule: L7 exe alone, other path",
     P_IDENT,
     {"/usr/bin/python3"},
     "api.example.com",
     443,
     "GET",
     "/public",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "py_l7",
     NULL},
    {"identity rule: connection prefers opaque",
     P_IDENT,
     {"/usr/bin/python3", C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "curl_l4",
     NULL},

    /* --- routes and opaque requests --------------------------------------- */
    /* docs/semantics.md#identity: non-canonical paths match no pattern */
    {"identity with an empty segment",
     P_API,
     {"/usr/bin//curl"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     NULL,
     NULL},
    {"identity with a dot segment",
     P_API,
     {"/usr/./bin/curl"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     NULL,
     NULL},
    {"identity with a trailing slash",
     P_API,
     {"/usr/bin/curl/"},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(BINARY),
     RT(NONE),
     NULL,
     NULL},
    {"non-canonical entry beside a canonical one",
     P_API,
     {"/usr//bin/curl", C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"opaque route reaches any method",
     P_API,
     {C_},
     "api.example.com",
     443,
     "DELETE",
     "/anything",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"opaque route ignores the query",
     P_API,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/x?a=%zz",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"tls skip is L4",
     P_TLS_SKIP,
     {C_},
     "api.example.com",
     443,
     "DELETE",
     "/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "skip",
     NULL},
    {"inspected connection",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},

    /* --- destinations ------------------------------------------------------ */
    {"internal address without allowed_ips",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "10.0.0.5",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "api",
     "api.example.com resolves to internal address 10.0.0.5, connection rejected"},
    {"loopback always blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "127.0.0.1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     "api.example.com resolves to always-blocked address 127.0.0.1, connection rejected"},
    {"mapped loopback blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "::ffff:127.0.0.1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"link-local blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "169.254.169.254",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"multicast blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "224.0.0.1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"NAT64 loopback blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "64:ff9b::7f00:1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"6to4 loopback blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "2002:7f00:1::",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"unspecified blocked",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "0.0.0.0",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "api",
     NULL},
    {"public address",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "8.8.8.8",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"public IPv6 address",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "2606:4700::1111",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"V35 mapped private",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "::ffff:10.0.0.1",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "api",
     NULL},
    {"V35 CGNAT",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "100.64.0.1",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "api",
     NULL},
    {"V35 just above CGNAT",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "100.128.0.1",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},
    {"V35 benchmarking range",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "198.18.0.1",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "api",
     NULL},
    {"ULA private",
     P_API,
     {C_},
     "api.example.com",
     443,
     NULL,
     NULL,
     "fd12::1",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "api",
     NULL},
    {"V21 wildcard to internal",
     P_CORP_WILD,
     {C_},
     "api.corp.net",
     443,
     NULL,
     NULL,
     "10.0.0.5",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "corp",
     NULL},
    {"V23 declared name to loopback",
     P_CORP_EXACT,
     {C_},
     "svc.corp.net",
     443,
     NULL,
     NULL,
     "127.0.0.1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "corp",
     NULL},
    {"declared name to private (ours: never trusted)",
     P_CORP_EXACT,
     {C_},
     "svc.corp.net",
     443,
     NULL,
     NULL,
     "10.1.2.3",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "corp",
     NULL},
    {"V25 inside allowed_ips",
     P_ALLOWED_IPS,
     {C_},
     "my-service.corp.net",
     8080,
     NULL,
     NULL,
     "10.0.5.20",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "svc",
     NULL},
    {"V25 outside allowed_ips",
     P_ALLOWED_IPS,
     {C_},
     "my-service.corp.net",
     8080,
     NULL,
     NULL,
     "10.0.6.1",
     DENY_GRANTED,
     R(DEST_ALLOWED_IPS),
     RT(OPAQUE),
     "svc",
     "my-service.corp.net resolves to 10.0.6.1 which is not in allowed_ips, connection "
     "rejected"},
    {"allowed_ips excludes public too",
     P_ALLOWED_IPS,
     {C_},
     "my-service.corp.net",
     8080,
     NULL,
     NULL,
     "8.8.8.8",
     DENY_GRANTED,
     R(DEST_ALLOWED_IPS),
     RT(OPAQUE),
     "svc",
     NULL},
    {"allowed_ips never admits loopback",
     P_ALLOWED_IPS,
     {C_},
     "my-service.corp.net",
     8080,
     NULL,
     NULL,
     "127.0.0.1",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "svc",
     NULL},
    {"hostless matches any host",
     P_HOSTLESS,
     {C_},
     "anything.lan",
     8080,
     "DELETE",
     "/x",
     "10.0.5.7",
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "lan",
     NULL},
    {"hostless matches an IP host",
     P_HOSTLESS,
     {C_},
     "10.0.5.9",
     8080,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "lan",
     NULL},
    {"hostless outside allowed_ips",
     P_HOSTLESS,
     {C_},
     "anything.lan",
     8080,
     NULL,
     NULL,
     "10.0.6.1",
     DENY_GRANTED,
     R(DEST_ALLOWED_IPS),
     RT(INSPECTED),
     "lan",
     NULL},
    {"hostless other port",
     P_HOSTLESS,
     {C_},
     "anything.lan",
     8081,
     NULL,
     NULL,
     "10.0.5.7",
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    /* docs/semantics.md#hostless: every host but the link-local ones, even
     * when the name resolves into allowed_ips. */
    {"hostless never matches a metadata name",
     P_HOSTLESS,
     {C_},
     "metadata.google.internal",
     8080,
     "GET",
     "/",
     "10.0.5.7",
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"hostless never matches a metadata name (case, dot)",
     P_HOSTLESS,
     {C_},
     "Metadata.",
     8080,
     NULL,
     NULL,
     "10.0.5.7",
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"hostless never matches a link-local IP host",
     P_HOSTLESS,
     {C_},
     "169.254.169.254",
     8080,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"hostless never matches a NAT64 link-local IP host",
     P_HOSTLESS,
     {C_},
     "64:ff9b::a9fe:101",
     8080,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"hostless matches a non-metadata name under google.internal",
     P_HOSTLESS,
     {C_},
     "x.google.internal",
     8080,
     NULL,
     NULL,
     "10.0.5.7",
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "lan",
     NULL},
    {"V29 metadata IP: granted, not allowed",
     P_METADATA_IP,
     {C_},
     "169.254.169.254",
     80,
     NULL,
     NULL,
     NULL,
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "meta",
     NULL},
    {"V29 metadata IP forward GET",
     P_METADATA_IP,
     {C_},
     "169.254.169.254",
     80,
     "GET",
     "/latest/meta-data",
     NULL,
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "meta",
     NULL},
    {"metadata IP in decimal spelling",
     P_METADATA_IP,
     {C_},
     "2852039166",
     80,
     NULL,
     NULL,
     NULL,
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "meta",
     NULL},
    {"metadata IP other address",
     P_METADATA_IP,
     {C_},
     "169.254.169.253",
     80,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     NULL},
    {"metadata name granted, unresolved",
     P_METADATA_NAME,
     {C_},
     "metadata.google.internal",
     80,
     "GET",
     "/computeMetadata/v1/",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "meta",
     NULL},
    {"metadata name resolved to link-local",
     P_METADATA_NAME,
     {C_},
     "metadata.google.internal",
     80,
     "GET",
     "/computeMetadata/v1/",
     "169.254.169.254",
     DENY_GRANTED,
     R(DEST_BLOCKED),
     RT(OPAQUE),
     "meta",
     NULL},
    {"V31 control-plane port on IP literal",
     P_CTRL_IP,
     {C_},
     "203.0.113.10",
     6443,
     NULL,
     NULL,
     NULL,
     DENY_GRANTED,
     R(DEST_PORT),
     RT(OPAQUE),
     "k8s",
     "port 6443 is a blocked control-plane port, connection rejected"},
    {"control-plane port on DNS name, public",
     P_CTRL_DNS,
     {C_},
     "etcd.example.com",
     2379,
     NULL,
     NULL,
     "8.8.8.8",
     DENY_GRANTED,
     R(DEST_PORT),
     RT(OPAQUE),
     "etcd",
     NULL},
    {"control-plane port inside allowed_ips",
     P_CTRL_DNS,
     {C_},
     "k8s.example.com",
     6443,
     NULL,
     NULL,
     "10.1.1.1",
     DENY_GRANTED,
     R(DEST_PORT),
     RT(OPAQUE),
     "etcd",
     NULL},
    {"V33 implicit IP literal",
     P_LAN_IP,
     {C_},
     "192.168.1.100",
     8567,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"V33 implicit IP literal, resolved",
     P_LAN_IP,
     {C_},
     "192.168.1.100",
     8567,
     NULL,
     NULL,
     "192.168.1.100",
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"IP literal in hex spelling",
     P_LAN_IP,
     {C_},
     "0xc0.0xa8.1.100",
     8567,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"IP literal, other destination",
     P_LAN_IP,
     {C_},
     "192.168.1.100",
     8567,
     NULL,
     NULL,
     "192.168.1.101",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"IPv6 literal in brackets",
     P_LAN_IP,
     {C_},
     "[FD00::1]",
     8443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"IPv6 host bracketed in the denial",
     P_LAN_IP,
     {C_},
     "[fd00::2]",
     8443,
     NULL,
     NULL,
     NULL,
     DENY,
     R(NO_ENDPOINT),
     RT(NONE),
     "",
     "endpoint [fd00::2]:8443 is not allowed by any policy"},
    {"IPv6 literal other spelling",
     P_LAN_IP,
     {C_},
     "fd00:0:0::1",
     8443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "lanip",
     NULL},
    {"advisor-proposed literal gets no trust",
     P_LAN_IP_ADVISOR,
     {C_},
     "192.168.1.100",
     8567,
     NULL,
     NULL,
     NULL,
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(OPAQUE),
     "lanip",
     "192.168.1.100 resolves to internal address 192.168.1.100, connection rejected"},
    {"unresolved target_sandbox admits nothing",
     P_SANDBOX,
     {C_},
     "peer.internal.example",
     8080,
     NULL,
     NULL,
     NULL,
     DENY_GRANTED,
     R(DEST_UNRESOLVED),
     RT(OPAQUE),
     "peer",
     "peer-1"},
    {"unresolved target_sandbox, public ip",
     P_SANDBOX,
     {C_},
     "peer.internal.example",
     8080,
     "GET",
     "/",
     "8.8.8.8",
     DENY_GRANTED,
     R(DEST_UNRESOLVED),
     RT(OPAQUE),
     "peer",
     NULL},

    /* --- L7 rules, methods and paths (V37-V49) ----------------------------- */
    {"V37 GET allowed by rule",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/myorg/foo",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     ""},
    {"V39 DELETE not permitted",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "DELETE",
     "/repos/myorg/foo",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     "DELETE /repos/myorg/foo not permitted by policy"},
    {"V41 lower-case method",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "get",
     "/repos/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"V41 HEAD matches GET rule",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "HEAD",
     "/repos/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"V41 OPTIONS not implied",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "OPTIONS",
     "/repos/x",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"POST one segment",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "POST",
     "/repos/o/issues",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"POST * does not cross /",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "POST",
     "/repos/o/a/issues",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"GET HEAD-only rule does not imply POST",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "POST",
     "/repos/o",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"/x/** needs the slash",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"/x/** matches /x/",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"path case-sensitive",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/Repos/x",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"rule method *",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "PURGE",
     "/any",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"rule method * other path",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "PURGE",
     "/anyx",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"dot segments resolved",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/./a/../x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"dot-dot escapes the glob",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/a/../../etc",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "repos",
     "GET /etc not permitted by policy"},
    {"params stripped",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/x;jsessionid=1",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"percent-decoded unreserved",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/%72epos/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"empty segments collapse",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "//repos//x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "repos",
     NULL},
    {"traversal above root",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/..",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     NULL},
    {"bad escape in path",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/%zz",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     NULL},
    {"encoded NUL in path",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/%00",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     NULL},
    {"no leading slash",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "repos/x",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     NULL},
    {"fragment rejected",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/x#f",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     NULL},
    {"invalid method",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GE T",
     "/repos/x",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "repos",
     "invalid HTTP method"},
    {"V43 read-only GET",
     P_RO,
     {C_},
     "ro.example.com",
     443,
     "GET",
     "/a",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"V43 read-only HEAD",
     P_RO,
     {C_},
     "ro.example.com",
     443,
     "HEAD",
     "/a/b",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"V43 read-only OPTIONS",
     P_RO,
     {C_},
     "ro.example.com",
     443,
     "OPTIONS",
     "/",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"V43 read-only POST",
     P_RO,
     {C_},
     "ro.example.com",
     443,
     "POST",
     "/a",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"V43 read-only DELETE",
     P_RO,
     {C_},
     "ro.example.com",
     443,
     "DELETE",
     "/a",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"read-write PATCH",
     P_RO,
     {C_},
     "rw.example.com",
     443,
     "PATCH",
     "/a",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"read-write PUT",
     P_RO,
     {C_},
     "rw.example.com",
     443,
     "PUT",
     "/a",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"read-write DELETE",
     P_RO,
     {C_},
     "rw.example.com",
     443,
     "DELETE",
     "/a",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"full any method",
     P_RO,
     {C_},
     "full.example.com",
     443,
     "DELETE",
     "/a/b/c",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ro",
     NULL},
    {"websocket read-only upgrade",
     P_WS,
     {C_},
     "ro.example.com",
     443,
     "GET",
     "/socket",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ws",
     NULL},
    {"websocket read-only text frame",
     P_WS,
     {C_},
     "ro.example.com",
     443,
     "WEBSOCKET_TEXT",
     "/socket",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "ws",
     NULL},
    {"websocket read-only HEAD via GET",
     P_WS,
     {C_},
     "ro.example.com",
     443,
     "HEAD",
     "/socket",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ws",
     NULL},
    {"websocket read-write text frame",
     P_WS,
     {C_},
     "rw.example.com",
     443,
     "WEBSOCKET_TEXT",
     "/socket",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "ws",
     NULL},
    {"websocket read-write POST",
     P_WS,
     {C_},
     "rw.example.com",
     443,
     "POST",
     "/socket",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "ws",
     NULL},

    /* --- audit mode ------------------------------------------------------- */
    {"V45 audit full any method",
     P_AUDIT,
     {C_},
     "full.example.com",
     443,
     "DELETE",
     "/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "aud",
     NULL},
    {"implicit audit forwards a non-matching request",
     P_AUDIT,
     {C_},
     "implicit.example.com",
     443,
     "POST",
     "/y",
     NULL,
     ALLOW,
     R(AUDIT),
     RT(INSPECTED),
     "aud",
     "POST /y"},
    {"audit ignores its deny rules",
     P_AUDIT,
     {C_},
     "implicit.example.com",
     443,
     "GET",
     "/x",
     NULL,
     ALLOW,
     R(AUDIT),
     RT(INSPECTED),
     "aud",
     NULL},
    {"explicit audit, rule matches",
     P_AUDIT,
     {C_},
     "explicit.example.com",
     443,
     "GET",
     "/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "aud",
     NULL},
    {"explicit audit, rule does not match",
     P_AUDIT,
     {C_},
     "explicit.example.com",
     443,
     "PUT",
     "/z",
     NULL,
     ALLOW,
     R(AUDIT),
     RT(INSPECTED),
     "aud",
     NULL},
    {"audit still checks the destination",
     P_AUDIT,
     {C_},
     "explicit.example.com",
     443,
     "PUT",
     "/z",
     "10.0.0.1",
     DENY_GRANTED,
     R(DEST_INTERNAL),
     RT(INSPECTED),
     "aud",
     NULL},
    {"audit still needs a valid path",
     P_AUDIT,
     {C_},
     "explicit.example.com",
     443,
     "PUT",
     "/../z",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "aud",
     NULL},

    /* --- deny rules (V47, V49) and deny wins ------------------------------ */
    {"V47 deny rule blocks",
     P_DENY,
     {C_},
     "api.github.com",
     443,
     "POST",
     "/repos/o/pulls/1/reviews",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "gh",
     "POST /repos/o/pulls/1/reviews blocked by deny rule"},
    {"V47 same method other path",
     P_DENY,
     {C_},
     "api.github.com",
     443,
     "POST",
     "/repos/o/issues",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gh",
     NULL},
    {"V49 HEAD blocked by GET deny rule",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "HEAD",
     "/protected",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "gh",
     NULL},
    {"V49 GET blocked",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "GET",
     "/protected",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "gh",
     NULL},
    {"V49 POST on denied path allowed",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/protected",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny query: matching value",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/force?force=true",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny query: some value matches",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/force?force=false&force=true",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny query: no value matches",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/force?force=false",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny query: key absent",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/force",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny query: malformed query never means no query",
     P_DENY,
     {C_},
     "prot.example.com",
     443,
     "POST",
     "/force?force=true&x=%zz",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "gh",
     NULL},
    {"deny wins over another rule's L4 grant",
     P_DENY_ACROSS,
     {C_},
     "api.example.com",
     443,
     "DELETE",
     "/x",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "b_l7",
     NULL},
    {"deny across: other methods allowed",
     P_DENY_ACROSS,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "a_l4",
     NULL},
    {"deny across: audit deny rule does not fire",
     P_DENY_ACROSS,
     {C_},
     "api.example.com",
     443,
     "PUT",
     "/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "a_l4",
     NULL},
    {"deny across: other binary's deny rule",
     P_DENY_ACROSS,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/y",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "a_l4",
     NULL},
    {"deny across: that binary is denied",
     P_DENY_ACROSS,
     {"/usr/bin/wget"},
     "api.example.com",
     443,
     "GET",
     "/y",
     NULL,
     DENY,
     R(L7_DENY_RULE),
     RT(INSPECTED),
     "d_wget",
     NULL},

    /* --- query (V51, V53) -------------------------------------------------- */
    {"V51 every value matches",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-a&tag=foo-b&extra=x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"V51 one value fails",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-a&tag=evil",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"V51 key missing",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"query value percent-decoded",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo%2Dx",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"query key without = has empty value",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"empty pairs skipped",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?&&tag=foo-1&",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"V53 (ours) * crosses dots",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/v?v=1.2",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"V53 plain value",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/v?v=12",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"V53 plus is space",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/v?v=a+b",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"* matches the empty value",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/v?v=",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"* still needs the key",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/v?w=1",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"any-form and glob-form match",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/any?tag=bx&ver=v2&tag=a",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"any-form value fails",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/any?tag=cx&ver=v2",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"glob-form key missing",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/any?tag=a",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"query keys are case-sensitive",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?TAG=foo-a",
     NULL,
     DENY,
     R(L7_NOT_PERMITTED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"malformed escape in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%zz",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     "malformed query string"},
    {"truncated escape in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%4",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     NULL},
    {"invalid UTF-8 in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%ff",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     NULL},
    {"overlong UTF-8 in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%c0%af",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     NULL},
    {"valid UTF-8 in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%c3%a9",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"NUL in query",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%00",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     NULL},
    /* docs/semantics.md#query-parse: %00 is invalid in keys too; other
     * control bytes are well formed; a malformed query denies on every
     * inspected route, with or without query matchers; opaque routes never
     * parse it. */
    {"NUL in a query key",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-a&x%00=1",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "dl",
     NULL},
    {"control byte in query is well formed",
     P_QUERY,
     {C_},
     "dl.example.com",
     443,
     "GET",
     "/download?tag=foo-%01",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "dl",
     NULL},
    {"malformed query without query matchers",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/x?a=%zz",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "repos",
     NULL},
    {"NUL in query without query matchers",
     P_REST,
     {C_},
     "api.example.com",
     8080,
     "GET",
     "/repos/x?a=%00",
     NULL,
     DENY,
     R(BAD_QUERY),
     RT(INSPECTED),
     "repos",
     NULL},
    {"opaque route ignores a NUL in the query",
     P_API,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/x?a=%00",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(OPAQUE),
     "api",
     NULL},

    /* --- encoded slash (V55) ---------------------------------------------- */
    {"V55 encoded slash without opt-in",
     P_SLASH,
     {C_},
     "plain.example.com",
     443,
     "GET",
     "/a/%2f/b",
     NULL,
     DENY,
     R(ENCODED_SLASH),
     RT(INSPECTED),
     "sl",
     "allow_encoded_slash"},
    {"V55 traversal above root",
     P_SLASH,
     {C_},
     "plain.example.com",
     443,
     "GET",
     "/..",
     NULL,
     DENY,
     R(BAD_TARGET),
     RT(INSPECTED),
     "sl",
     NULL},
    {"encoded slash with opt-in",
     P_SLASH,
     {C_},
     "slash.example.com",
     443,
     "GET",
     "/a/%2F/b",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "sl",
     NULL},
    {"plain path on opt-in endpoint",
     P_SLASH,
     {C_},
     "slash.example.com",
     443,
     "GET",
     "/a/b",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "sl",
     NULL},

    /* --- unsupported protocols and path scopes ----------------------------- */
    {"enforced graphql denies a request without an operation",
     P_UNSUP,
     {C_},
     "gql.example.com",
     443,
     "POST",
     "/graphql",
     NULL,
     DENY,
     R(GQL_NO_OPERATION),
     RT(INSPECTED),
     "gql",
     "POST /graphql is not a GraphQL operation; graphql endpoint of policy 'gql' denies it"},
    {"enforced graphql connection reaches",
     P_UNSUP,
     {C_},
     "gql.example.com",
     443,
     NULL,
     NULL,
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gql",
     NULL},
    {"audit graphql forwards",
     P_UNSUP,
     {C_},
     "gqlaudit.example.com",
     443,
     "POST",
     "/graphql",
     NULL,
     ALLOW,
     R(AUDIT),
     RT(INSPECTED),
     "gql",
     NULL},
    {"enforced mcp denies",
     P_UNSUP,
     {C_},
     "mcp.example.com",
     443,
     "POST",
     "/mcp",
     NULL,
     DENY,
     R(L7_UNSUPPORTED),
     RT(INSPECTED),
     "gql",
     "protocol mcp is not inspected"},
    {"L4 unit grants beside enforced graphql",
     P_UNSUP,
     {C_},
     "mixed.example.com",
     443,
     "POST",
     "/graphql",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "gql",
     NULL},
    {"path scope selects the rest endpoint",
     P_SCOPE,
     {C_},
     "api.example.com",
     443,
     "DELETE",
     "/v1/x",
     NULL,
     ALLOW,
     R(ALLOWED),
     RT(INSPECTED),
     "scoped",
     NULL},
    {"path scope selects the graphql endpoint",
     P_SCOPE,
     {C_},
     "api.example.com",
     443,
     "POST",
     "/graphql",
     NULL,
     DENY,
     R(GQL_NO_OPERATION),
     RT(INSPECTED),
     "scoped",
     NULL},
    {"no path scope matches",
     P_SCOPE,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/other",
     NULL,
     DENY,
     R(NO_L7_PATH),
     RT(INSPECTED),
     "scoped",
     "GET /other not permitted by policy"},
    {"path scope /v1/** needs the slash",
     P_SCOPE,
     {C_},
     "api.example.com",
     443,
     "GET",
     "/v1",
     NULL,
     DENY,
     R(NO_L7_PATH),
     RT(INSPECTED),
     "scoped",
     NULL},
};

static struct model_policy *load(const char *yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(d);
    p = model_policy_load("test.yaml", yaml, strlen(yaml), MODEL_FMT_YAML, d);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    }
    model_diags_free(d);
    return p;
}

static void run_row(const struct erow *r, struct model_policy *p)
{
    struct model_request req;
    struct model_decision out;
    struct model_ip ip;
    size_t n = 0;

    while (n < 4 && r->bins[n] != NULL) {
        n++;
    }
    memset(&req, 0, sizeof(req));
    req.binaries = r->bins;
    req.nbinaries = n;
    req.host = r->host;
    req.host_len = strlen(r->host);
    req.port = r->port;
    req.method = r->method;
    req.target = r->target;
    req.target_len = r->target != NULL ? strlen(r->target) : 0;
    if (r->ip != NULL) {
        ck_assert_msg(model_ip_parse(r->ip, strlen(r->ip), &ip), "%s: bad ip", r->name);
        req.dest = &ip;
    }
    memset(&out, 0x5a, sizeof(out));
    model_decide(p, &req, &out);
    ck_assert_msg(out.allow == (r->allow != 0), "%s: allow %d (reason %s: %s)", r->name, out.allow,
                  model_reason_name(out.reason), out.detail);
    ck_assert_msg(out.reason == r->reason, "%s: reason %s, want %s (%s)", r->name,
                  model_reason_name(out.reason), model_reason_name(r->reason), out.detail);
    if (r->grant != ANY) {
        ck_assert_msg(out.grant == (r->grant != 0), "%s: grant %d", r->name, out.grant);
    }
    if (r->route != ANY) {
        ck_assert_msg(out.route == (enum model_route)r->route, "%s: route %s", r->name,
                      model_route_name(out.route));
    }
    if (r->rule != NULL && r->rule[0] == '\0') {
        ck_assert_msg(out.rule == NULL, "%s: unexpected rule", r->name);
    } else if (r->rule != NULL) {
        ck_assert_msg(out.rule != NULL && strcmp(model_rule_key(out.rule), r->rule) == 0,
                      "%s: rule %s, want %s", r->name,
                      out.rule != NULL ? model_rule_key(out.rule) : "(null)", r->rule);
        ck_assert_msg(out.endpoint != NULL, "%s: no endpoint", r->name);
    }
    if (r->detail != NULL && r->detail[0] == '\0') {
        ck_assert_msg(out.detail[0] == '\0', "%s: detail '%s'", r->name, out.detail);
    } else if (r->detail != NULL) {
        ck_assert_msg(strstr(out.detail, r->detail) != NULL, "%s: detail '%s' lacks '%s'", r->name,
                      out.detail, r->detail);
    }
    if (out.allow) {
        ck_assert_msg(out.grant, "%s: allow without grant", r->name);
        ck_assert_msg(out.binary != NULL, "%s: allow without binary", r->name);
    }
    ck_assert_msg(memchr(out.detail, '\0', sizeof(out.detail)) != NULL, "%s: detail unterminated",
                  r->name);
}

START_TEST(test_decide_table)
{
    const struct erow *r = &rows[_i];
    struct model_policy *p = load(r->policy);

    ck_assert_msg(p != NULL, "%s: policy does not load", r->name);
    run_row(r, p);
    /* A recompiled policy decides the same. */
    ck_assert(pv_ok(model_policy_compile(p)));
    run_row(r, p);
    model_policy_free(p);
}
END_TEST

/* ===========================================================================
 * Load-time errors that the evaluator relies on
 * ========================================================================= */

static const struct {
    const char *name;
    const char *yaml;
    const char *msg; /* substring of some diagnostic */
} bad_policies[] = {
    {"V27 (ours) allowed_ips loopback is a load error",
     HDR "  x:\n    endpoints:\n      - host: h.example.com\n        port: 443\n"
         "        allowed_ips: [127.0.0.0/8]\n" CURL,
     "always-blocked"},
    {"allowed_ips link-local is a load error",
     HDR "  x:\n    endpoints:\n      - host: h.example.com\n        port: 443\n"
         "        allowed_ips: [169.254.0.0/16]\n" CURL,
     "always-blocked"},
    {"allowed_ips garbage is a load error",
     HDR "  x:\n    endpoints:\n      - host: h.example.com\n        port: 443\n"
         "        allowed_ips: [not-an-ip]\n" CURL,
     "allowed_ips"},
    {"enforced sql is a load error",
     HDR "  x:\n    endpoints:\n      - host: db.example.com\n        port: 5432\n"
         "        protocol: sql\n        enforcement: enforce\n        access: full\n" CURL,
     "SQL enforcement"},
};

START_TEST(test_load_errors)
{
    struct model_diags *d = model_diags_new();
    const char *y = bad_policies[_i].yaml;
    struct model_policy *p = model_policy_load("bad.yaml", y, strlen(y), MODEL_FMT_YAML, d);
    bool found = false;

    ck_assert_msg(p == NULL, "%s: loaded", bad_policies[_i].name);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_msg(d, i), bad_policies[_i].msg) != NULL) {
            found = true;
        }
    }
    ck_assert_msg(found, "%s: no diagnostic with '%s'", bad_policies[_i].name,
                  bad_policies[_i].msg);
    model_diags_free(d);
}
END_TEST

/* A policy that is fine, as a sanity check of the bad-policy harness. */
START_TEST(test_load_ok_control)
{
    struct model_policy *p = load(P_ALLOWED_IPS);

    ck_assert_ptr_nonnull(p);
    model_policy_free(p);
}
END_TEST

/* ===========================================================================
 * Compile: presets, recompilation, resolved target_sandbox
 * ========================================================================= */

static const struct {
    const char *host;
    size_t n;
    const char *methods[6];
} preset_rows[] = {
    {"ro.example.com", 3, {"GET", "HEAD", "OPTIONS"}},
    {"rw.example.com", 6, {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"}},
    {"full.example.com", 1, {"*"}},
};

START_TEST(test_preset_expansion)
{
    struct model_policy *p = load(P_RO);
    const struct model_endpoint *e = NULL;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < p->rules[0].nendpoints; i++) {
        if (strcmp(p->rules[0].endpoints[i].host.s, preset_rows[_i].host) == 0) {
            e = &p->rules[0].endpoints[i];
        }
    }
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->nrules, 0);
    ck_assert_uint_eq(e->neff_rules, preset_rows[_i].n);
    for (size_t i = 0; i < e->neff_rules; i++) {
        ck_assert_str_eq(e->eff_rules[i].method.s, preset_rows[_i].methods[i]);
        ck_assert_str_eq(e->eff_rules[i].path.s, "**");
        ck_assert_ptr_nonnull(e->eff_rules[i].path_glob);
    }
    model_policy_free(p);
}
END_TEST

START_TEST(test_compile_fields)
{
    struct model_policy *p = load(P_QUERY);
    const struct model_endpoint *e;

    ck_assert_ptr_nonnull(p);
    ck_assert(p->compiled);
    ck_assert_ptr_nonnull(p->index);
    e = &p->rules[0].endpoints[0];
    ck_assert_ptr_nonnull(e->host_glob);
    ck_assert(!e->host_is_ip);
    /* Explicit rules are deep copies, compiled independently. */
    ck_assert_uint_eq(e->neff_rules, e->nrules);
    ck_assert_ptr_ne(e->eff_rules[0].method.s, e->rules[0].method.s);
    ck_assert_str_eq(e->eff_rules[2].query[0].key.s, "tag");
    ck_assert_ptr_nonnull(e->eff_rules[2].query[0].compiled);
    ck_assert_ptr_nonnull(e->eff_rules[2].query[0].compiled[1]);
    ck_assert_ptr_nonnull(e->rules[0].path_glob);
    ck_assert_ptr_nonnull(p->rules[0].binaries[0].glob);
    model_policy_free(p);

    p = load(P_LAN_IP);
    ck_assert_ptr_nonnull(p);
    e = &p->rules[0].endpoints[0];
    ck_assert(e->host_is_ip);
    ck_assert_ptr_null(e->host_glob);
    model_policy_free(p);
}
END_TEST

static void decide_simple(const struct model_policy *p, const char *host, uint16_t port,
                          const char *ip, struct model_decision *out)
{
    static const char *const bins[] = {"/usr/bin/curl"};
    struct model_request req;
    struct model_ip addr;

    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = host;
    req.host_len = strlen(host);
    req.port = port;
    if (ip != NULL) {
        ck_assert(model_ip_parse(ip, strlen(ip), &addr));
        req.dest = &addr;
    }
    model_decide(p, &req, out);
}

static const struct {
    const char *ip;
    bool allow;
    enum model_reason reason;
} sandbox_rows[] = {
    {"10.9.0.7", true, MODEL_REASON_ALLOWED},
    {"10.9.0.8", false, MODEL_REASON_DEST_ALLOWED_IPS},
    {"8.8.8.8", false, MODEL_REASON_DEST_ALLOWED_IPS},
    {NULL, true, MODEL_REASON_ALLOWED},
};

static const char *const *peer_fn(void *arg, const char *name)
{
    static const char *const none[] = {NULL};

    return strcmp(name, "peer-1") == 0 || strcmp(name, "db") == 0 ? (const char *const *)arg : none;
}

/* Composition resolves target_sandbox into resolved_ips; the endpoint then
 * admits exactly the peer's address, and unresolving it admits nothing. */
START_TEST(test_resolved_target_sandbox)
{
    static const char *const addrs[] = {"10.9.0.7", "10.9.0.7", NULL};
    static const char *const none[] = {NULL};
    struct model_policy *p = load(P_SANDBOX);
    struct model_diags *d = model_diags_new();
    struct model_decision out;
    char *yaml;

    ck_assert_ptr_nonnull(p);
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_DEST_UNRESOLVED);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    ck_assert_uint_eq(p->rules[0].endpoints[0].resolved_ips.n, 1); /* unique */
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert_int_eq(out.allow, sandbox_rows[_i].allow);
    ck_assert_int_eq(out.reason, sandbox_rows[_i].reason);
    yaml = model_policy_to_yaml(p, NULL);
    ck_assert_ptr_nonnull(strstr(yaml, "resolved_ips"));
    free(yaml);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(none), d)));
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_DEST_UNRESOLVED);
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

/* A peer address that is always-blocked (not loopback) fails composition. */
START_TEST(test_resolve_refuses_link_local)
{
    static const char *const addrs[] = {"169.254.169.254", NULL};
    struct model_policy *p = load(P_SANDBOX);
    struct model_diags *d = model_diags_new();

    ck_assert(!pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    ck_assert_uint_ge(model_diags_count(d), 1);
    ck_assert_ptr_nonnull(strstr(model_diags_line(d, 0), "is always blocked"));
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

static const char P_PEER[] = HDR "  peer:\n"
                                 "    endpoints:\n"
                                 "      - target_sandbox: db\n"
                                 "        port: 8080\n" CURL;

/* docs/semantics.md#test-loopback: under the switch a loopback peer address
 * is reached only when the request names that address literally. */
static const struct {
    const char *host;
    const char *ip;
    bool test_loopback;
    bool allow;
    enum model_reason reason;
} peer_lo_rows[] = {
    {"127.0.0.6", "127.0.0.6", true, true, MODEL_REASON_ALLOWED},
    {"127.0.0.6", "127.0.0.6", false, false, MODEL_REASON_DEST_BLOCKED},
    {"127.0.0.7", "127.0.0.7", true, false, MODEL_REASON_DEST_BLOCKED},
    {"db.local", "127.0.0.6", true, false, MODEL_REASON_DEST_BLOCKED},
    {"db.local", "10.1.1.1", true, false, MODEL_REASON_DEST_ALLOWED_IPS},
};

START_TEST(test_peer_loopback_switch)
{
    static const char *const addrs[] = {"127.0.0.6", NULL};
    static const char *const bins[] = {"/usr/bin/curl"};
    struct model_policy *p = load(P_PEER);
    struct model_diags *d = model_diags_new();
    struct model_request req;
    struct model_decision out;
    struct model_ip addr;

    ck_assert_ptr_nonnull(p);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = peer_lo_rows[_i].host;
    req.host_len = strlen(req.host);
    req.port = 8080;
    req.test_loopback = peer_lo_rows[_i].test_loopback;
    ck_assert(model_ip_parse(peer_lo_rows[_i].ip, strlen(peer_lo_rows[_i].ip), &addr));
    req.dest = &addr;
    model_decide(p, &req, &out);
    ck_assert_int_eq(out.allow, peer_lo_rows[_i].allow);
    ck_assert_int_eq(out.reason, peer_lo_rows[_i].reason);
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

/* ===========================================================================
 * Many candidates: the scan fallback sees the same units
 * ========================================================================= */

#define BIG_RULES 300

static char *big_policy(bool hostless)
{
    size_t cap = 400u * BIG_RULES + 64;
    char *y = malloc(cap);
    size_t len;

    ck_assert_ptr_nonnull(y);
    len = (size_t)snprintf(y, cap, "%s", HDR);
    for (int i = 0; i < BIG_RULES; i++) {
        int n;
        if (hostless) {
            n = snprintf(y + len, cap - len,
                         "  r%03d:\n    endpoints:\n      - port: 443\n        protocol: rest\n"
                         "        enforcement: enforce\n        access: full\n"
                         "        allowed_ips: [10.0.%d.0/24]\n%s"
                         "    binaries:\n      - path: /opt/b%03d/*\n",
                         i, i % 250,
                         i == 150 ? "        deny_rules:\n"
                                    "          - {method: GET, path: /deny}\n"
                                  : "",
                         i);
        } else {
            n = snprintf(y + len, cap - len,
                         "  r%03d:\n    endpoints:\n      - host: '*.big.example.com'\n"
                         "        port: 443\n    binaries:\n      - path: /opt/b%03d/*\n",
                         i, i);
        }
        ck_assert(n > 0 && (size_t)n < cap - len);
        len += (size_t)n;
    }
    if (hostless) {
        /* Only the scan visits wildcards for an IP host: it must skip them. */
        int n = snprintf(y + len, cap - len,
                         "  zz_tenstar:\n    endpoints:\n      - host: '10.*.*.*'\n"
                         "        port: 443\n    binaries:\n      - path: /opt/tenstar\n");
        ck_assert(n > 0 && (size_t)n < cap - len);
    }
    return y;
}

static const struct {
    bool hostless;
    const char *host;
    const char *bin;
    const char *method;
    const char *target;
    const char *ip;
    bool allow;
    enum model_reason reason;
    const char *rule;
} big_rows[] = {
    {false, "a.big.example.com", "/opt/b299/x", NULL, NULL, NULL, true, MODEL_REASON_ALLOWED,
     "r299"},
    {false, "a.big.example.com", "/opt/b000/x", NULL, NULL, NULL, true, MODEL_REASON_ALLOWED,
     "r000"},
    {false, "a.big.example.com", "/opt/b999/x", NULL, NULL, NULL, false, MODEL_REASON_BINARY,
     "r000"},
    {false, "a.big.example.com", "/opt/b123/x", NULL, NULL, "10.0.0.1", false,
     MODEL_REASON_DEST_INTERNAL, "r123"},
    {true, "a.big.example.com", "/opt/b150/x", "GET", "/deny", "10.0.150.1", false,
     MODEL_REASON_L7_DENY_RULE, "r150"},
    {true, "a.big.example.com", "/opt/b150/x", "GET", "/ok", "10.0.150.1", true,
     MODEL_REASON_ALLOWED, "r150"},
    {true, "a.big.example.com", "/opt/b270/x", "GET", "/deny", "10.0.20.1", true,
     MODEL_REASON_ALLOWED, "r270"},
    {true, "a.big.example.com", "/opt/b270/x", "GET", "/ok", "10.0.21.1", false,
     MODEL_REASON_DEST_ALLOWED_IPS, "r270"},
    {true, "10.0.0.5", "/opt/tenstar", NULL, NULL, "10.0.0.5", false, MODEL_REASON_BINARY, "r000"},
    {true, "10.0.0.5", "/opt/b000/x", "GET", "/", NULL, true, MODEL_REASON_ALLOWED, "r000"},
};

START_TEST(test_scan_fallback)
{
    char *y = big_policy(big_rows[_i].hostless);
    struct model_policy *p = load(y);
    const char *bins[1] = {big_rows[_i].bin};
    struct model_request req;
    struct model_decision out;
    struct model_ip ip;

    ck_assert_ptr_nonnull(p);
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = big_rows[_i].host;
    req.host_len = strlen(req.host);
    req.port = 443;
    req.method = big_rows[_i].method;
    req.target = big_rows[_i].target;
    req.target_len = req.target != NULL ? strlen(req.target) : 0;
    if (big_rows[_i].ip != NULL) {
        ck_assert(model_ip_parse(big_rows[_i].ip, strlen(big_rows[_i].ip), &ip));
        req.dest = &ip;
    }
    model_decide(p, &req, &out);
    ck_assert_msg(out.allow == big_rows[_i].allow, "row %d: %s", _i, out.detail);
    ck_assert_int_eq(out.reason, big_rows[_i].reason);
    ck_assert_ptr_nonnull(out.rule);
    ck_assert_str_eq(model_rule_key(out.rule), big_rows[_i].rule);
    model_policy_free(p);
    free(y);
}
END_TEST

/* ===========================================================================
 * Defensive inputs, names, method validity
 * ========================================================================= */

START_TEST(test_defensive)
{
    struct model_policy *p = load(P_API);
    struct model_policy *empty = model_policy_new_empty();
    const char *bins[MODEL_MAX_IDENTITY + 1];
    struct model_request req;
    struct model_decision out;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i <= MODEL_MAX_IDENTITY; i++) {
        bins[i] = "/usr/bin/curl";
    }
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = "api.example.com";
    req.host_len = strlen(req.host);
    req.port = 443;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* NULL policy or request: deny. */
    model_decide(NULL, &req, &out);
    ck_assert(!out.allow && !out.grant);
    model_decide(p, NULL, &out);
    ck_assert(!out.allow);
    model_decide(p, &req, NULL); /* must not crash */
    /* Empty (uncompiled or rule-less) policy. */
    if (empty != NULL) {
        model_decide(empty, &req, &out);
        ck_assert(!out.allow);
        ck_assert_int_eq(out.reason, MODEL_REASON_NO_POLICY);
        model_policy_free(empty);
    }
    /* Too many identity entries: fail closed. */
    req.nbinaries = MODEL_MAX_IDENTITY + 1;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    req.nbinaries = MODEL_MAX_IDENTITY;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* NULL host, NULL target with a method. */
    req.nbinaries = 1;
    req.host = NULL;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_BAD_HOST);
    model_policy_free(p);

    p = load(P_REST);
    ck_assert_ptr_nonnull(p);
    req.host = "api.example.com";
    req.port = 8080;
    req.method = "GET";
    req.target = NULL;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_BAD_TARGET);
    /* The target length is honoured: "/repos/x" cut to "/rep". */
    req.target = "/repos/x";
    req.target_len = 4;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    req.target_len = 8;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* A host with an embedded NUL is not the host before it. */
    req.host = "api.example.com\0.evil";
    req.host_len = 21;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    model_policy_free(p);
}
END_TEST

START_TEST(test_names)
{
    static const enum model_reason all[] = {
        MODEL_REASON_ALLOWED,
        MODEL_REASON_AUDIT,
        MODEL_REASON_NO_POLICY,
        MODEL_REASON_NO_ENDPOINT,
        MODEL_REASON_BINARY,
        MODEL_REASON_BAD_HOST,
        MODEL_REASON_BAD_TARGET,
        MODEL_REASON_ENCODED_SLASH,
        MODEL_REASON_NO_L7_PATH,
        MODEL_REASON_L7_NOT_PERMITTED,
        MODEL_REASON_L7_DENY_RULE,
        MODEL_REASON_L7_UNSUPPORTED,
        MODEL_REASON_BAD_QUERY,
        MODEL_REASON_DEST_BLOCKED,
        MODEL_REASON_DEST_PORT,
        MODEL_REASON_DEST_INTERNAL,
        MODEL_REASON_DEST_ALLOWED_IPS,
        MODEL_REASON_DEST_UNRESOLVED,
        MODEL_REASON_GQL_NO_OPERATION,
        MODEL_REASON_GQL_BAD_METHOD,
        MODEL_REASON_GQL_BAD_OPERATION,
        MODEL_REASON_GQL_PERSISTED_DENIED,
        MODEL_REASON_GQL_PERSISTED_UNKNOWN,
    };

    for (size_t i = 0; i < PV_ARRAY_LEN(all); i++) {
        const char *n = model_reason_name(all[i]);
        ck_assert_str_ne(n, "unknown");
        for (const char *s = n; *s != '\0'; s++) {
            ck_assert(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'));
        }
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(n, model_reason_name(all[j]));
        }
    }
    ck_assert_str_eq(model_reason_name(MODEL_REASON_ALLOWED), "allowed");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_AUDIT), "audit");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_NO_ENDPOINT), "no_endpoint");
    ck_assert_str_eq(model_reason_name((enum model_reason)999), "unknown");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_NONE), "none");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_OPAQUE), "opaque");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_INSPECTED), "inspected");
}
END_TEST

static const struct {
    const char *m;
    bool ok;
} method_rows[] = {
    {"GET", true},
    {"get", true},
    {"WEBSOCKET_TEXT", true},
    {"*", true},
    {"M-SEARCH", true},
    {"", false},
    {"GE T", false},
    {"GET\r\n", false},
    {"GET/", false},
    {"(GET)", false},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG", false},
};

START_TEST(test_method_valid)
{
    const char *m = method_rows[_i].m;

    ck_assert_msg(model_method_valid(m, strlen(m)) == method_rows[_i].ok, "'%s'", m);
}
END_TEST

static Suite *eval_suite(void)
{
    Suite *s = suite_create("model_eval");
    TCase *tc = tcase_create("eval");

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_decide_table, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_loop_test(tc, test_load_errors, 0, (int)PV_ARRAY_LEN(bad_policies));
    tcase_add_test(tc, test_load_ok_control);
    tcase_add_loop_test(tc, test_preset_expansion, 0, (int)PV_ARRAY_LEN(preset_rows));
    tcase_add_test(tc, test_compile_fields);
    tcase_add_loop_test(tc, test_resolved_target_sandbox, 0, (int)PV_ARRAY_LEN(sandbox_rows));
    tcase_add_test(tc, test_resolve_refuses_link_local);
    tcase_add_loop_test(tc, test_peer_loopback_switch, 0, (int)PV_ARRAY_LEN(peer_lo_rows));
    tcase_add_loop_test(tc, test_scan_fallback, 0, (int)PV_ARRAY_LEN(big_rows));
    tcase_add_test(tc, test_defensive);
    tcase_add_test(tc, test_names);
    tcase_add_loop_test(tc, test_method_valid, 0, (int)PV_ARRAY_LEN(method_rows));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(eval_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
