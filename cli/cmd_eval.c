/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_eval.c - `proviso eval`: decide one request under a policy
 *
 *   proviso eval --policy FILE --binary PATH [--binary ANCESTOR ...]
 *                (--method M --url URL | --connect HOST:PORT)
 *                [--operation-type T [--operation-name N] --fields F,F | --persisted-id ID]
 *                [--ip ADDR] [--format text|json] [--test-allow-loopback]
 *
 * The URL is http://host[:port]/path?query or https://... (default ports 80
 * and 443); --connect asks for a connection-level (CONNECT) decision instead.
 * The answer comes from model_decide(), the same function the proxy calls.
 * Exit status: 0 allow, 1 deny, 2 invalid input (bad policy, URL or flags).
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "model/model.h"

struct eval_args {
    const char *policy;
    const char *binaries[MODEL_MAX_IDENTITY];
    size_t nbinaries;
    const char *method;
    const char *url;
    const char *connect;
    const char *ip;
    bool json;
    bool test_loopback;
    const char *optype; /* GraphQL (docs/semantics.md#graphql) */
    const char *opname;
    const char *fields;
    const char *persisted;
    const char *rpc_kind; /* JSON-RPC / MCP (docs/semantics.md#rpc) */
    const char *rpc_method;
    const char *rpc_tool;
};

#define EVAL_MAX_FIELDS 64

/* A parsed request: slices of the URL (or --connect) argument. */
struct eval_target {
    const char *host;
    size_t host_len;
    uint16_t port;
    char target[8192]; /* "path?query" */
    size_t target_len;
};

static const struct pv_opt eval_opts[] = {
    {"policy", "FILE", "the policy (YAML or JSON)", 0},
    {"binary", "PATH", "the calling binary; repeat for its ancestors", PV_OPT_REPEAT},
    {"method", "M", "the HTTP method (with --url)", 0},
    {"url", "URL", "http://host[:port]/path?query or https://...", 0},
    {"connect", "HOST:PORT", "a connection-level (CONNECT) decision instead", 0},
    {"ip", "ADDR", "the resolved destination address", 0},
    {"operation-type", "T", "a GraphQL operation: query, mutation or subscription", 0},
    {"operation-name", "NAME", "its operation name (default: anonymous)", 0},
    {"fields", "F,F", "its root field names, comma-separated", 0},
    {"persisted-id", "ID", "a hash-only persisted GraphQL query instead", 0},
    {"rpc-method", "M", "a JSON-RPC / MCP call's method (a request unless --rpc-kind)", 0},
    {"rpc-tool", "NAME", "its tool (an MCP tools/call)", 0},
    {"rpc-kind", "K", "request, notification, response, stream or end (default request)", 0},
    {"format", "text|json", "output format (default text)", 0},
    {"test-allow-loopback", NULL, "tests only: decide as proviso-proxy --test-allow-loopback does",
     0},
};

static const struct pv_cmd eval_cmd = {
    .prog = "proviso eval",
    .synopsis = "--policy FILE --binary PATH [--binary ANCESTOR ...]\n"
                "                    (--method M --url URL | --connect HOST:PORT)\n"
                "                    [--operation-type T [--operation-name NAME] --fields F,F\n"
                "                     | --persisted-id ID]\n"
                "                    [--rpc-method M [--rpc-tool NAME] [--rpc-kind K]\n"
                "                     | --rpc-kind response|stream|end]\n"
                "                    [--ip ADDR] [--format text|json] [--test-allow-loopback]",
    .summary = "Decide one request under a policy with the proxy's own decision function.",
    .opts = eval_opts,
    .nopts = PV_ARRAY_LEN(eval_opts),
    .example = "proviso eval --policy policy.yaml --binary /usr/bin/curl \\\n"
               "    --method GET --url https://api.github.com/repos/o/r",
    .epilog = "exit: 0 allow, 1 deny, 2 invalid input or usage",
};

static bool parse_port(const char *s, size_t len, uint16_t *out)
{
    uint64_t v;

    if (!pv_ok(pv_parse_u64(s, len, 65535, &v)) || v == 0) {
        return false;
    }
    *out = (uint16_t)v;
    return true;
}

/* "host[:port]" or "[v6][:port]"; 'defport' 0 means the port is required. */
static bool parse_authority(const char *a, size_t len, uint16_t defport, struct eval_target *t)
{
    const char *colon = NULL;

    if (len == 0 || memchr(a, '@', len) != NULL) {
        return false;
    }
    if (a[0] == '[') {
        const char *close = memchr(a, ']', len);
        if (close == NULL) {
            return false;
        }
        t->host = a;
        t->host_len = (size_t)(close - a) + 1;
        if (t->host_len < len) {
            if (a[t->host_len] != ':') {
                return false;
            }
            colon = a + t->host_len;
        }
    } else {
        colon = memchr(a, ':', len);
        t->host = a;
        t->host_len = colon != NULL ? (size_t)(colon - a) : len;
    }
    if (t->host_len == 0) {
        return false;
    }
    if (colon != NULL) {
        return parse_port(colon + 1, len - (size_t)(colon + 1 - a), &t->port);
    }
    if (defport == 0) {
        return false;
    }
    t->port = defport;
    return true;
}

static bool has_prefix_ci(const char *s, const char *prefix)
{
    for (size_t i = 0; prefix[i] != '\0'; i++) {
        char ch = s[i];
        if (ch >= 'A' && ch <= 'Z') {
            ch = (char)(ch - 'A' + 'a');
        }
        if (ch != prefix[i]) {
            return false;
        }
    }
    return true;
}

static bool parse_url(const char *url, struct eval_target *t)
{
    const char *rest;
    uint16_t defport;
    size_t alen;
    size_t tlen;
    const char *frag;

    if (has_prefix_ci(url, "http://")) {
        rest = url + 7;
        defport = 80;
    } else if (has_prefix_ci(url, "https://")) {
        rest = url + 8;
        defport = 443;
    } else {
        return false;
    }
    alen = strcspn(rest, "/?#");
    if (!parse_authority(rest, alen, defport, t)) {
        return false;
    }
    rest += alen;
    /* A fragment is never sent to the server. */
    frag = strchr(rest, '#');
    tlen = frag != NULL ? (size_t)(frag - rest) : strlen(rest);
    if (tlen + 2 > sizeof(t->target)) {
        return false;
    }
    t->target_len = 0;
    if (tlen == 0 || rest[0] != '/') {
        t->target[t->target_len++] = '/';
    }
    memcpy(t->target + t->target_len, rest, tlen);
    t->target_len += tlen;
    t->target[t->target_len] = '\0';
    return true;
}

/* Returns 0 to go on, -1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct eval_args *a)
{
    struct pv_args pa;
    const char *fmt;

    switch (pv_args_parse(&eval_cmd, argc, argv, &pa)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return -1;
    case PV_ARGS_USAGE:
        return 2;
    }
    if (pa.npos > 0) {
        return pv_args_usage(&eval_cmd, "unexpected operand '%s'", pa.pos[0]);
    }
    a->policy = pv_args_get(&pa, "policy");
    if (pv_args_count(&pa, "binary") > MODEL_MAX_IDENTITY) {
        return pv_args_usage(&eval_cmd, "at most %d --binary options", MODEL_MAX_IDENTITY);
    }
    while (a->nbinaries < pv_args_count(&pa, "binary")) {
        a->binaries[a->nbinaries] = pv_args_nth(&pa, "binary", (unsigned)a->nbinaries);
        a->nbinaries++;
    }
    a->method = pv_args_get(&pa, "method");
    a->url = pv_args_get(&pa, "url");
    a->connect = pv_args_get(&pa, "connect");
    a->ip = pv_args_get(&pa, "ip");
    a->test_loopback = pv_args_has(&pa, "test-allow-loopback");
    a->optype = pv_args_get(&pa, "operation-type");
    a->opname = pv_args_get(&pa, "operation-name");
    a->fields = pv_args_get(&pa, "fields");
    a->persisted = pv_args_get(&pa, "persisted-id");
    a->rpc_kind = pv_args_get(&pa, "rpc-kind");
    a->rpc_method = pv_args_get(&pa, "rpc-method");
    a->rpc_tool = pv_args_get(&pa, "rpc-tool");
    fmt = pv_args_get(&pa, "format");
    if (fmt != NULL && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
        return pv_args_usage(&eval_cmd, "--format must be text or json");
    }
    a->json = fmt != NULL && strcmp(fmt, "json") == 0;
    if (a->policy == NULL || a->nbinaries == 0) {
        return pv_args_usage(&eval_cmd, "--policy and --binary are required");
    }
    if (a->connect != NULL ? (a->method != NULL || a->url != NULL)
                           : (a->method == NULL || a->url == NULL)) {
        return pv_args_usage(&eval_cmd, "give --method and --url, or --connect");
    }
    if ((a->optype != NULL || a->opname != NULL || a->fields != NULL || a->persisted != NULL) &&
        a->url == NULL) {
        return pv_args_usage(&eval_cmd, "a GraphQL operation needs --method and --url");
    }
    if (a->persisted != NULL ? (a->optype != NULL || a->opname != NULL || a->fields != NULL)
                             : (a->optype != NULL || a->opname != NULL || a->fields != NULL) &&
                                   (a->optype == NULL || a->fields == NULL)) {
        return pv_args_usage(&eval_cmd, "give --operation-type and --fields (and optionally "
                                        "--operation-name), or --persisted-id");
    }
    if ((a->rpc_kind != NULL || a->rpc_method != NULL || a->rpc_tool != NULL) &&
        (a->url == NULL || a->optype != NULL || a->persisted != NULL)) {
        return pv_args_usage(&eval_cmd, "a JSON-RPC call needs --method and --url and no "
                                        "GraphQL operation");
    }
    return 0;
}

/* The GraphQL operation of the options into 'op' (fields point into 'buf',
 * a copy of --fields split at commas). Returns 0, or 2 after a message. */
static int parse_gql(const struct eval_args *a, struct model_gql_op *op, char *buf, size_t cap,
                     char **fields)
{
    static const enum model_gql_optype types[] = {MODEL_GQL_QUERY, MODEL_GQL_MUTATION,
                                                  MODEL_GQL_SUBSCRIPTION};
    bool known = false;
    size_t len;

    memset(op, 0, sizeof(*op));
    if (a->persisted != NULL) {
        op->persisted_id = (char *)(uintptr_t)a->persisted;
        return 0;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(types) && !known; i++) {
        if (strcmp(a->optype, model_gql_optype_name(types[i])) == 0) {
            op->type = types[i];
            known = true;
        }
    }
    if (!known) {
        fprintf(stderr, "proviso eval: --operation-type must be query, mutation or "
                        "subscription\n");
        return 2;
    }
    op->name = (char *)(uintptr_t)a->opname;
    len = strlen(a->fields);
    if (len >= cap) {
        fprintf(stderr, "proviso eval: --fields is too long\n");
        return 2;
    }
    memcpy(buf, a->fields, len + 1);
    op->fields = fields;
    for (char *f = buf;; f++) {
        char *comma = strchr(f, ',');

        if (op->nfields == EVAL_MAX_FIELDS) {
            fprintf(stderr, "proviso eval: at most %d --fields\n", EVAL_MAX_FIELDS);
            return 2;
        }
        fields[op->nfields++] = f;
        if (comma == NULL) {
            break;
        }
        *comma = '\0';
        f = comma;
    }
    return 0;
}

/* The JSON-RPC call of the options into 'k'. Returns 0, or 2 after a message. */
static int parse_rpc(const struct eval_args *a, struct model_rpc_call *k)
{
    memset(k, 0, sizeof(*k));
    k->kind = MODEL_RPC_REQUEST;
    if (a->rpc_kind != NULL && !model_rpc_kind_parse(a->rpc_kind, &k->kind)) {
        fprintf(stderr, "proviso eval: --rpc-kind must be request, notification, response, stream "
                        "or end\n");
        return 2;
    }
    switch (k->kind) {
    case MODEL_RPC_REQUEST:
    case MODEL_RPC_NOTIFICATION:
        if (a->rpc_method == NULL) {
            fprintf(stderr, "proviso eval: a %s needs --rpc-method\n",
                    model_rpc_kind_name(k->kind));
            return 2;
        }
        if (strncmp(a->rpc_method, "rpc.", 4) == 0) {
            fprintf(stderr, "proviso eval: method names beginning 'rpc.' are reserved; use "
                            "--rpc-kind response, stream or end\n");
            return 2;
        }
        k->method = a->rpc_method;
        break;
    case MODEL_RPC_RESPONSE:
    case MODEL_RPC_STREAM:
    case MODEL_RPC_END:
        if (a->rpc_method != NULL || a->rpc_tool != NULL) {
            fprintf(stderr, "proviso eval: --rpc-kind %s takes no --rpc-method or --rpc-tool\n",
                    model_rpc_kind_name(k->kind));
            return 2;
        }
        k->method = k->kind == MODEL_RPC_RESPONSE ? MODEL_RPC_M_RESPONSE
                    : k->kind == MODEL_RPC_STREAM ? MODEL_RPC_M_STREAM
                                                  : MODEL_RPC_M_END;
        break;
    }
    if (a->rpc_tool != NULL && strcmp(k->method, "tools/call") != 0) {
        fprintf(stderr, "proviso eval: --rpc-tool needs --rpc-method tools/call\n");
        return 2;
    }
    k->tool = a->rpc_tool;
    return 0;
}

/* "host:80,443" (or "(hostless):..." for a hostless endpoint) into buf. */
static void endpoint_text(const struct model_endpoint *e, char *buf, size_t cap)
{
    const char *h = model_endpoint_host(e);
    size_t len;
    int n;

    n = snprintf(buf, cap, "%s", h[0] != '\0' ? h : "(hostless)");
    len = n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < model_endpoint_nports(e) && len < cap; i++) {
        n = snprintf(buf + len, cap - len, "%c%u", i == 0 ? ':' : ',',
                     (unsigned)model_endpoint_port(e, i));
        if (n < 0) {
            break;
        }
        len += (size_t)n;
    }
}

static int print_json(const struct model_decision *d)
{
    char ep[512];
    json_t *o;
    char *s;

    if (d->endpoint != NULL) {
        endpoint_text(d->endpoint, ep, sizeof(ep));
    }
    o = json_pack("{s:b, s:b, s:s, s:s, s:s}", "allow", d->allow, "grant", d->grant, "reason",
                  model_reason_name(d->reason), "detail", d->detail, "route",
                  model_route_name(d->route));
    if (o == NULL) {
        fprintf(stderr, "proviso eval: out of memory\n");
        return 2;
    }
    if (json_object_set_new(
            o, "rule", d->rule != NULL ? json_string(model_rule_key(d->rule)) : json_null()) != 0 ||
        json_object_set_new(o, "endpoint", d->endpoint != NULL ? json_string(ep) : json_null()) !=
            0 ||
        json_object_set_new(o, "binary",
                            d->binary != NULL ? json_string(d->binary) : json_null()) != 0) {
        json_decref(o);
        fprintf(stderr, "proviso eval: out of memory\n");
        return 2;
    }
    s = json_dumps(o, JSON_SORT_KEYS);
    json_decref(o);
    if (s == NULL) {
        fprintf(stderr, "proviso eval: out of memory\n");
        return 2;
    }
    printf("%s\n", s);
    free(s);
    return d->allow ? 0 : 1;
}

static int print_text(const struct model_decision *d)
{
    char ep[512];

    if (d->allow) {
        printf("allow%s%s\n", d->reason == MODEL_REASON_AUDIT ? ": audit: " : "",
               d->reason == MODEL_REASON_AUDIT ? d->detail : "");
    } else {
        printf("deny: %s: %s\n", model_reason_name(d->reason), d->detail);
    }
    printf("route: %s\n", model_route_name(d->route));
    printf("grant: %s\n", d->grant ? "true" : "false");
    if (d->rule != NULL) {
        printf("rule: %s\n", model_rule_key(d->rule));
    }
    if (d->endpoint != NULL) {
        endpoint_text(d->endpoint, ep, sizeof(ep));
        printf("endpoint: %s\n", ep);
    }
    if (d->binary != NULL) {
        printf("binary: %s\n", d->binary);
    }
    return d->allow ? 0 : 1;
}

static int load_policy(const char *path, struct model_policy **out)
{
    struct model_diags *diags;
    size_t len = 0;
    char *buf = cli_read_file(path, MODEL_MAX_POLICY_BYTES, &len);

    if (buf == NULL) {
        return 2;
    }
    diags = model_diags_new();
    if (diags == NULL) {
        fprintf(stderr, "proviso eval: out of memory\n");
        free(buf);
        return 2;
    }
    *out = model_policy_load(path, buf, len, MODEL_FMT_AUTO, diags);
    if (*out == NULL) {
        const char *hint = cli_doc_hint(path, buf, len, CLI_DOC_POLICY);
        size_t n = model_diags_count(diags);
        for (size_t i = 0; i < n; i++) {
            fprintf(stderr, "%s\n", model_diags_line(diags, i));
        }
        if (n == 0) {
            fprintf(stderr, "proviso eval: %s: cannot load policy\n", path);
        }
        if (hint != NULL) {
            fprintf(stderr, "%s\n", hint);
        }
        model_diags_free(diags);
        free(buf);
        return 2;
    }
    model_diags_free(diags);
    free(buf);
    return 0;
}

int cli_eval(int argc, char **argv)
{
    struct eval_args a;
    struct eval_target t;
    struct model_request req;
    struct model_decision d;
    struct model_ip ip;
    struct model_policy *p = NULL;
    struct model_gql_op op;
    struct model_rpc_call call;
    bool rpc;
    char fbuf[4096];
    char *fields[EVAL_MAX_FIELDS];
    int rc;

    memset(&a, 0, sizeof(a));
    memset(&t, 0, sizeof(t));
    rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        return rc < 0 ? 0 : rc;
    }
    if (a.connect != NULL) {
        if (!parse_authority(a.connect, strlen(a.connect), 0, &t)) {
            fprintf(stderr, "proviso eval: --connect '%s' is not HOST:PORT\n", a.connect);
            return 2;
        }
    } else if (!parse_url(a.url, &t)) {
        fprintf(stderr, "proviso eval: '%s' is not an http:// or https:// URL\n", a.url);
        return 2;
    }
    if (a.method != NULL && !model_method_valid(a.method, strlen(a.method))) {
        fprintf(stderr, "proviso eval: invalid method '%s'\n", a.method);
        return 2;
    }
    if (a.ip != NULL && !model_ip_parse(a.ip, strlen(a.ip), &ip)) {
        fprintf(stderr, "proviso eval: --ip '%s' is not an IP address\n", a.ip);
        return 2;
    }
    if ((a.optype != NULL || a.persisted != NULL) &&
        parse_gql(&a, &op, fbuf, sizeof(fbuf), fields) != 0) {
        return 2;
    }
    rpc = a.rpc_kind != NULL || a.rpc_method != NULL || a.rpc_tool != NULL;
    if (rpc && parse_rpc(&a, &call) != 0) {
        return 2;
    }
    rc = load_policy(a.policy, &p);
    if (rc != 0) {
        return rc;
    }
    memset(&req, 0, sizeof(req));
    req.binaries = a.binaries;
    req.nbinaries = a.nbinaries;
    req.host = t.host;
    req.host_len = t.host_len;
    req.port = t.port;
    req.method = a.method;
    req.target = a.method != NULL ? t.target : NULL;
    req.target_len = a.method != NULL ? t.target_len : 0;
    req.dest = a.ip != NULL ? &ip : NULL;
    req.test_loopback = a.test_loopback;
    req.gql = a.optype != NULL || a.persisted != NULL ? &op : NULL;
    req.rpc = rpc ? &call : NULL;
    model_decide(p, &req, &d);
    rc = a.json ? print_json(&d) : print_text(&d);
    model_policy_free(p);
    return rc;
}
