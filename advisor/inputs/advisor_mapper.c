/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_mapper.c - the mechanistic mapper: denials in, narrow proposals out
 *
 * A sandbox's proxy streams its denials (POST /v1/sandboxes/{name}/denials,
 * proxy_denials.c): host, port, binary, ancestors, stage and, for requests
 * it inspected, the method and canonical path. The mapper aggregates them
 * per (sandbox, host, port, binary) - a count, first and last seen, the
 * first stage, at most MAPPER_SAMPLES distinct (method, path) samples - and
 * every flush interval drains the table into one mechanistic proposal per
 * group, submitted like any other (advisor_submit): evaluated by the
 * prover, deduplicated on host|port|binary, approved automatically only on
 * an empty delta in auto mode. docs/advisor.md#mapper.
 *
 * The proposal is the narrowest rule that would have allowed what was seen:
 * L7 (protocol rest, enforcement enforce) with one allow rule per distinct
 * (method, generalised path) when the proxy inspected the requests, L4 only
 * when it saw none; never `access`, never a `**` glob. Generalising replaces an
 * ID-like segment (digits, long hex, UUID-like) by `*`, which matches one
 * segment. Groups that name an always-blocked destination, or no binary,
 * propose nothing.
 *
 * The table lives in memory: denials are observations, not acknowledged
 * writes; what a crash loses the proxy reports again on the next denial.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advisor/inputs/inputs.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "common/pv_text.h"
#include "common/pv_time.h"
#include "model/model.h"

#define MAPPER_BUCKETS 1024u
#define MAPPER_GROUPS_MAX 4096u
#define MAPPER_EVENTS_MAX 4096u /* per request */
#define MAPPER_FIELD_MAX 2048u

struct mapper_sample {
    char *method;
    char *path;
    /* the refused GraphQL operation or JSON-RPC call as the allow rule that
     * names exactly it (gql_of, call_of); NULL: none */
    json_t *op;
};

/* What kind of endpoint a group's proposal names: a REST one (or L4 only)
 * keyed by host, port and binary, or a GraphQL, WebSocket, MCP or JSON-RPC
 * one keyed also by its exact path (the scope such an endpoint has). */
enum mapper_kind {
    MAPPER_REST,
    MAPPER_GRAPHQL,
    MAPPER_WEBSOCKET,
    MAPPER_MCP,
    MAPPER_JSONRPC,
};

static bool kind_is_rpc(enum mapper_kind k)
{
    return k == MAPPER_MCP || k == MAPPER_JSONRPC;
}

struct mapper_group {
    struct mapper_group *next;
    char *sandbox;
    char *host;
    char *binary;
    char *stage;
    enum mapper_kind kind;
    char *scope; /* the exact path of a GraphQL or WebSocket group, else "" */
    int64_t port;
    int64_t count;
    int64_t first_ms;
    int64_t last_ms;
    bool ssrf;
    size_t nsamples;
    struct mapper_sample samples[ADVISOR_MAPPER_SAMPLES];
};

struct advisor_mapper {
    struct advisor *a;
    unsigned flush_ms;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    bool started;
    pthread_t tid;
    struct mapper_group *buckets[MAPPER_BUCKETS];
    size_t ngroups;
    int64_t dropped;
};

/* ===========================================================================
 * Rules (pure)
 * ========================================================================= */

static bool all_of(const char *s, size_t n, int (*pred)(int))
{
    for (size_t i = 0; i < n; i++) {
        if (!pred((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

static int is_hex_or_dash(int c)
{
    return isxdigit(c) || c == '-';
}

/* An ID-like segment: all digits (two or more), sixteen or more hex digits,
 * or twenty-four or more hex digits and dashes with a dash (a UUID). */
static bool id_like(const char *s, size_t n)
{
    if (n >= 2 && all_of(s, n, isdigit)) {
        return true;
    }
    if (n >= 16 && all_of(s, n, isxdigit)) {
        return true;
    }
    return n >= 24 && memchr(s, '-', n) != NULL && all_of(s, n, is_hex_or_dash);
}

bool advisor_mapper_generalise(const char *path, char *out, size_t outlen)
{
    size_t o = 0;
    const char *p = path;
    const char *end = path + strcspn(path, "?#");

    if (outlen == 0 || p[0] != '/') {
        return false;
    }
    /* A glob metacharacter in an observed path would widen the rule. */
    if (strcspn(path, "*?[]{}\\") < (size_t)(end - path)) {
        return false;
    }
    while (p < end) {
        const char *seg = ++p; /* past the '/' */
        size_t n = strcspn(seg, "/?#");
        const char *put = id_like(seg, n) ? "*" : seg;
        size_t plen = put == seg ? n : 1;

        if (seg + n > end) {
            n = (size_t)(end - seg);
            plen = put == seg ? n : 1;
        }
        if (o + 1 + plen >= outlen) {
            return false;
        }
        out[o++] = '/';
        memcpy(out + o, put, plen);
        o += plen;
        p = seg + n;
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = '\0';
    return true;
}

void advisor_mapper_rule_name(const char *host, int64_t port, char *out, size_t len)
{
    size_t o = 0;

    o += (size_t)snprintf(out, len, "allow_");
    for (const char *h = host; *h != '\0' && o + 1 < len; h++) {
        unsigned char c = (unsigned char)*h;
        if (c == '.' || c == '-') {
            out[o++] = '_';
        } else if (isalnum(c)) {
            out[o++] = (char)tolower(c);
        }
    }
    out[o < len ? o : len - 1] = '\0';
    if (o < len) {
        snprintf(out + o, len - o, "_%lld", (long long)port);
    }
}

double advisor_mapper_confidence(int64_t count, int64_t port, bool ssrf)
{
    static const int64_t known[] = {80,   443,  8080,  8443, 5432, 3306, 6379, 27017, 9200,
                                    9092, 2181, 11211, 5672, 6443, 53,   587,  993,   995};
    double c = 0.5;

    if (count >= 10) {
        c += 0.2;
    } else if (count >= 3) {
        c += 0.1;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(known); i++) {
        if (known[i] == port) {
            c += 0.15;
            break;
        }
    }
    if (ssrf) {
        c -= 0.2;
    }
    return c < 0.1 ? 0.1 : c > 0.95 ? 0.95 : c;
}

static int is_method_char(int c)
{
    return isupper(c) || c == '_';
}

/* A method the proxy saw: an upper-case token (WEBSOCKET_TEXT too), never a
 * glob. */
static bool method_ok(const char *m)
{
    size_t n = m != NULL ? strlen(m) : 0;

    return n > 0 && n <= 16 && isupper((unsigned char)m[0]) && all_of(m, n, is_method_char);
}

/* A GraphQL Name ([_A-Za-z][_0-9A-Za-z]*, docs/semantics.md#graphql-names):
 * never a glob, so a rule naming it matches it alone. */
static bool gql_name_ok(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > 256 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) {
            return false;
        }
    }
    return true;
}

#define MAPPER_GQL_FIELDS_MAX 64u

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The GraphQL operation of a denial ({operation_type, operation_name?,
 * fields}) as the allow rule that names exactly it: {operation_type,
 * operation_name (only when the operation had one), fields (sorted,
 * unique)}. NULL when it is not one (a persisted query, a type other than
 * query/mutation/subscription, a name or field that is not a Name, no
 * fields or too many): such a denial proposes nothing a rule could lift. */
static json_t *gql_of(const json_t *g)
{
    const char *t = json_string_value(json_object_get(g, "operation_type"));
    const json_t *name = json_object_get(g, "operation_name");
    const json_t *fields = json_object_get(g, "fields");
    const char *f[MAPPER_GQL_FIELDS_MAX];
    size_t n = json_array_size(fields);
    json_t *out;
    json_t *fa;

    if (!json_is_object(g) || t == NULL ||
        (strcmp(t, "query") != 0 && strcmp(t, "mutation") != 0 && strcmp(t, "subscription") != 0) ||
        (name != NULL && !gql_name_ok(json_string_value(name))) || !json_is_array(fields) ||
        n == 0 || n > MAPPER_GQL_FIELDS_MAX) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        f[i] = json_string_value(json_array_get(fields, i));
        if (!gql_name_ok(f[i])) {
            return NULL;
        }
    }
    qsort(f, n, sizeof(f[0]), cmp_cstr);
    fa = json_array();
    for (size_t i = 0; fa != NULL && i < n; i++) {
        if (i == 0 || strcmp(f[i - 1], f[i]) != 0) {
            json_array_append_new(fa, json_string(f[i]));
        }
    }
    out = name != NULL ? json_pack("{s:s,s:O,s:o}", "operation_type", t, "operation_name", name,
                                   "fields", fa)
                       : json_pack("{s:s,s:o}", "operation_type", t, "fields", fa);
    return out;
}

#define MAPPER_RPC_NAME_MAX 256u

/* A JSON-RPC method or MCP tool name a rule can name exactly: text without
 * a glob metacharacter (a rule would read it as a pattern, and on mcp with
 * strict_tool_names off a tool pattern is refused) and not over-long. */
static bool rpc_name_ok(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;

    return n > 0 && n <= MAPPER_RPC_NAME_MAX && strcspn(s, "*?[]{}\\") == n;
}

/* The JSON-RPC / MCP call of a denial ({kind, method, tool?}) as the allow
 * rule that names exactly it: {method} or, for an MCP tools/call, {method,
 * tool}. NULL when a rule could not name it alone (a name with a glob
 * metacharacter, a tool on json-rpc): such a call proposes nothing. */
static json_t *call_of(const json_t *c, enum mapper_kind kind)
{
    const char *m = json_string_value(json_object_get(c, "method"));
    const json_t *tool = json_object_get(c, "tool");

    if (!json_is_object(c) || !rpc_name_ok(m)) {
        return NULL;
    }
    if (tool == NULL) {
        return json_pack("{s:s}", "method", m);
    }
    if (kind != MAPPER_MCP || strcmp(m, "tools/call") != 0 ||
        !rpc_name_ok(json_string_value(tool))) {
        return NULL;
    }
    return json_pack("{s:s,s:O}", "method", m, "tool", tool);
}

/* One allow rule and its canonical text (sort and de-duplication key). */
struct mapper_rule {
    char *text;
    json_t *rule;
};

static int cmp_rule(const void *a, const void *b)
{
    return strcmp(((const struct mapper_rule *)a)->text, ((const struct mapper_rule *)b)->text);
}

/* Add {"allow": al} (stolen) to 'tmp' unless it is full. */
static void add_rule(struct mapper_rule *tmp, size_t *n, size_t cap, json_t *al)
{
    json_t *r = al != NULL ? json_pack("{s:o}", "allow", al) : NULL;
    char *text = r != NULL ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    if (text == NULL || *n >= cap) {
        free(text);
        json_decref(r);
        return;
    }
    tmp[*n].text = text;
    tmp[*n].rule = r;
    (*n)++;
}

/* A prior allow rule of the group's kind, checked as strictly as a new
 * one: REST {method, path} without `**`; GraphQL {operation_type,
 * operation_name?, fields} of Names; WebSocket text {method WEBSOCKET_TEXT,
 * the group's path} or a GraphQL one. A copy, or NULL. */
static json_t *prior_rule(const struct mapper_group *g, const json_t *al)
{
    const char *m = json_string_value(json_object_get(al, "method"));
    const char *p = json_string_value(json_object_get(al, "path"));

    if (kind_is_rpc(g->kind)) {
        json_t *c = call_of(al, g->kind);
        if (c != NULL && json_object_size(c) != json_object_size(al)) {
            json_decref(c); /* something else beside the call: not ours */
            c = NULL;
        }
        return c;
    }

    if (json_object_get(al, "operation_type") != NULL) {
        json_t *q = g->kind != MAPPER_REST ? gql_of(al) : NULL;
        if (q != NULL && json_object_size(q) != json_object_size(al)) {
            json_decref(q); /* something else beside the operation: not ours */
            q = NULL;
        }
        return q;
    }
    if (!method_ok(m) || p == NULL || p[0] != '/' || strstr(p, "**") != NULL ||
        json_object_size(al) != 2) {
        return NULL;
    }
    if (g->kind == MAPPER_GRAPHQL ||
        (g->kind == MAPPER_WEBSOCKET &&
         (strcmp(m, "WEBSOCKET_TEXT") != 0 || strcmp(p, g->scope) != 0)) ||
        (g->kind == MAPPER_REST && strcmp(m, "WEBSOCKET_TEXT") == 0)) {
        return NULL;
    }
    return json_pack("{s:s,s:s}", "method", m, "path", p);
}

/* The allow rule naming sample 's' in a group of its kind, or NULL. */
static json_t *sample_rule(const struct mapper_group *g, const struct mapper_sample *s)
{
    char path[MAPPER_FIELD_MAX];

    switch (g->kind) {
    case MAPPER_GRAPHQL:
    case MAPPER_MCP:
    case MAPPER_JSONRPC:
        return s->op != NULL ? json_deep_copy(s->op) : NULL;
    case MAPPER_WEBSOCKET:
        if (s->op != NULL) {
            return json_deep_copy(s->op);
        }
        /* a text message on the upgrade's exact path (never generalised) */
        return strcmp(s->method, "WEBSOCKET_TEXT") == 0 && strcmp(s->path, g->scope) == 0
                   ? json_pack("{s:s,s:s}", "method", "WEBSOCKET_TEXT", "path", g->scope)
                   : NULL;
    case MAPPER_REST:
        break;
    }
    if (s->op != NULL || !method_ok(s->method) || strcmp(s->method, "WEBSOCKET_TEXT") == 0 ||
        !advisor_mapper_generalise(s->path, path, sizeof(path))) {
        return NULL;
    }
    return json_pack("{s:s,s:s}", "method", s->method, "path", path);
}

/* The sorted, de-duplicated allow rules of a group's samples, together
 * with 'prior' (the allow rules of the pending chunk this group adds to). */
static json_t *group_rules(const struct mapper_group *g, const json_t *prior)
{
    struct mapper_rule tmp[2 * ADVISOR_MAPPER_SAMPLES];
    json_t *rules = json_array();
    size_t n = 0;

    for (size_t i = 0; i < json_array_size(prior) && n < ADVISOR_MAPPER_SAMPLES; i++) {
        add_rule(tmp, &n, ADVISOR_MAPPER_SAMPLES,
                 prior_rule(g, json_object_get(json_array_get(prior, i), "allow")));
    }
    for (size_t i = 0; i < g->nsamples; i++) {
        add_rule(tmp, &n, PV_ARRAY_LEN(tmp), sample_rule(g, &g->samples[i]));
    }
    qsort(tmp, n, sizeof(tmp[0]), cmp_rule);
    for (size_t i = 0; i < n; i++) {
        if (rules != NULL && (i == 0 || cmp_rule(&tmp[i - 1], &tmp[i]) != 0)) {
            json_array_append(rules, tmp[i].rule);
        }
    }
    for (size_t i = 0; i < n; i++) {
        json_decref(tmp[i].rule);
        free(tmp[i].text);
    }
    return rules;
}

/* The kind of group a denial event belongs to, and for GraphQL and
 * WebSocket ones its scope (the request's path, borrowed from 'ev'): a
 * WEBSOCKET_TEXT message is the upgrade's endpoint's; a request that
 * carried a GraphQL operation, or that a protocol: graphql endpoint refused
 * (the proxy says "protocol": "graphql"), a GraphQL endpoint's. */
static enum mapper_kind event_kind(const json_t *ev, const char **scope)
{
    const char *m = json_string_value(json_object_get(ev, "method"));
    const char *p = json_string_value(json_object_get(ev, "path"));
    const char *proto = json_string_value(json_object_get(ev, "protocol"));

    *scope = "";
    if (m == NULL || p == NULL || p[0] != '/') {
        return MAPPER_REST;
    }
    *scope = p;
    if (strcmp(m, "WEBSOCKET_TEXT") == 0) {
        return MAPPER_WEBSOCKET;
    }
    if (json_object_get(ev, "rpc") != NULL && proto != NULL) {
        /* a call an mcp or json-rpc endpoint refused: a call rule on it */
        if (strcmp(proto, "mcp") == 0) {
            return MAPPER_MCP;
        }
        if (strcmp(proto, "json-rpc") == 0) {
            return MAPPER_JSONRPC;
        }
    }
    if (json_object_get(ev, "graphql") != NULL ||
        (proto != NULL && strcmp(proto, "graphql") == 0)) {
        return MAPPER_GRAPHQL;
    }
    *scope = "";
    return MAPPER_REST;
}

/* Was the event a JSON-RPC / MCP call (the proxy says "rpc", or the
 * protocol of the endpoint that refused it)? */
static bool rpc_event(const json_t *ev)
{
    return json_object_get(ev, "rpc") != NULL || advisor_protocol_is_rpc(ev);
}

/* The proposal's intent_summary: what the rule allows, in words
 * ("Allow /usr/bin/git to connect to h:443 with L7 inspection. Allowed
 * paths: GET /x. Seen 2 times."). */
/* The protocol a group's endpoint has, in a proposal and in words. */
static const char *kind_protocol(enum mapper_kind k)
{
    static const char *const name[] = {"rest", "graphql", "websocket", "mcp", "json-rpc"};

    return name[k];
}

static const char *kind_word(enum mapper_kind k)
{
    static const char *const word[] = {"L7", "GraphQL", "WebSocket", "MCP", "JSON-RPC"};

    return word[k];
}

static void intent_summary(const struct mapper_group *g, const json_t *rules, char *why,
                           size_t whylen)
{
    size_t wl;

    wl = (size_t)snprintf(why, whylen, "Allow %s to connect to %s:%lld", g->binary, g->host,
                          (long long)g->port);
    if (g->kind != MAPPER_REST && wl < whylen) {
        wl += (size_t)snprintf(why + wl, whylen - wl,
                               " with %s inspection on %s. Allowed:", kind_word(g->kind), g->scope);
    } else if (json_array_size(rules) > 0 && wl < whylen) {
        wl += (size_t)snprintf(why + wl, whylen - wl, " with L7 inspection. Allowed paths:");
    }
    for (size_t i = 0; i < json_array_size(rules) && wl < whylen; i++) {
        const json_t *al = json_object_get(json_array_get(rules, i), "allow");
        const json_t *f = json_object_get(al, "fields");
        if (kind_is_rpc(g->kind)) {
            /* a call: "tools/call tool=create_issue" */
            const char *t = json_string_value(json_object_get(al, "tool"));
            wl += (size_t)snprintf(why + wl, whylen - wl, "%s %s%s%s", i > 0 ? "," : "",
                                   json_string_value(json_object_get(al, "method")),
                                   t != NULL ? " tool=" : "", t != NULL ? t : "");
            continue;
        }
        if (f == NULL) {
            wl += (size_t)snprintf(why + wl, whylen - wl, "%s %s %s", i > 0 ? "," : "",
                                   json_string_value(json_object_get(al, "method")),
                                   json_string_value(json_object_get(al, "path")));
            continue;
        }
        /* a GraphQL operation: "mutation CreateIssue {createIssue}" */
        const char *on = json_string_value(json_object_get(al, "operation_name"));
        wl += (size_t)snprintf(why + wl, whylen - wl, "%s %s%s%s {", i > 0 ? "," : "",
                               json_string_value(json_object_get(al, "operation_type")),
                               on != NULL ? " " : "", on != NULL ? on : "");
        for (size_t j = 0; j < json_array_size(f) && wl < whylen; j++) {
            wl += (size_t)snprintf(why + wl, whylen - wl, "%s%s", j > 0 ? "," : "",
                                   json_string_value(json_array_get(f, j)));
        }
        if (wl < whylen) {
            wl += (size_t)snprintf(why + wl, whylen - wl, "}");
        }
    }
    if (wl < whylen) {
        snprintf(why + wl, whylen - wl, ". Seen %lld time%s.", (long long)g->count,
                 g->count == 1 ? "" : "s");
    }
}

/* advisor_mapper_proposal, and when 'model' is not NULL the model's
 * reading of the proposal into it (the one parse that also validates it),
 * so that the flush hands both to the lifecycle. */
static json_t *mapper_proposal(const struct mapper_group *g, const json_t *prior,
                               bool allow_loopback, double *confidence,
                               struct model_proposal **model)
{
    const char *host = g->host;
    const char *binary = g->binary;
    int64_t port = g->port;
    char name[320];
    char why[2048];
    json_t *ep;
    json_t *rule;
    json_t *rules;
    const char *blocked;
    json_t *prop;
    char *text;
    struct model_diags *d;
    struct model_proposal *pr;

    /* A denial names one concrete host and one binary: never a glob. */
    if (binary == NULL || binary[0] != '/' ||
        model_glob_literal_prefix(MODEL_GLOB_BINARY, binary, strlen(binary)) != strlen(binary) ||
        host == NULL || host[0] == '\0' || strchr(host, '*') != NULL || port < 1 || port > 65535) {
        return NULL;
    }
    if (g->kind != MAPPER_REST && (g->scope == NULL || g->scope[0] != '/' ||
                                   strcspn(g->scope, "*?[]{}\\") != strlen(g->scope))) {
        return NULL; /* a path the endpoint's glob would read as a pattern */
    }
    ep = json_pack("{s:s,s:I}", "host", host, "port", (json_int_t)port);
    rules = group_rules(g, prior);
    if (ep == NULL || rules == NULL || (g->kind != MAPPER_REST && json_array_size(rules) == 0)) {
        /* a GraphQL or WebSocket denial no rule of its endpoint lifts (an
         * unreadable operation, a persisted query): never an L4 rule */
        json_decref(ep);
        json_decref(rules);
        return NULL;
    }
    if (g->kind != MAPPER_REST) {
        /* the endpoint's exact path: a proposal merges into the endpoint
         * that refused it (same host, path and port, docs/semantics.md#merge) */
        json_object_set_new(ep, "path", json_string(g->scope));
        json_object_set_new(ep, "protocol", json_string(kind_protocol(g->kind)));
        json_object_set_new(ep, "enforcement", json_string("enforce"));
        json_object_set(ep, "rules", rules);
    } else if (json_array_size(rules) > 0) {
        json_object_set_new(ep, "protocol", json_string("rest"));
        json_object_set_new(ep, "enforcement", json_string("enforce"));
        json_object_set(ep, "rules", rules);
    }
    rule = json_pack("{s:[o],s:[{s:s}]}", "endpoints", ep, "binaries", "path", binary);
    if (rule == NULL) {
        json_decref(rules);
        return NULL;
    }
    blocked = advisor_rule_blocked_host(rule, allow_loopback);
    if (blocked != NULL) {
        json_decref(rule);
        json_decref(rules);
        return NULL;
    }
    advisor_mapper_rule_name(host, port, name, sizeof(name));
    if (g->kind != MAPPER_REST) {
        /* one pending chunk per endpoint: a rule name is what a newer
         * pending proposal supersedes, so two endpoints of one host and
         * port (an mcp /mcp beside a json-rpc /rpc) need names of their own */
        size_t o = strlen(name);
        for (const char *c = g->scope; *c != '\0' && o + 2 < sizeof(name); c++) {
            name[o++] = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '_';
        }
        name[o] = '\0';
    }
    intent_summary(g, rules, why, sizeof(why));
    json_decref(rules);
    *confidence = advisor_mapper_confidence(g->count, port, g->ssrf);
    prop = json_pack("{s:s,s:[{s:{s:s,s:o}}]}", "intent_summary", why, "operations", "addRule",
                     "ruleName", name, "rule", rule);
    /* Denials come from a proxy, its fields from traffic: propose only what
     * the model reads as a valid proposal (a host or method it refuses
     * proposes nothing). */
    text = prop != NULL ? json_dumps(prop, JSON_COMPACT) : NULL;
    d = model_diags_new();
    pr = text != NULL && d != NULL ? model_proposal_load("mapper", text, strlen(text), d) : NULL;
    if (pr == NULL) {
        json_decref(prop);
        prop = NULL;
    }
    if (model != NULL && prop != NULL) {
        *model = pr;
        pr = NULL;
    }
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    return prop;
}

json_t *advisor_mapper_proposal(const char *host, int64_t port, const char *binary, int64_t count,
                                bool ssrf, const char *const *methods, const char *const *paths,
                                size_t nsamples, const json_t *prior, bool allow_loopback,
                                double *confidence)
{
    struct mapper_group g;

    memset(&g, 0, sizeof(g));
    g.host = PV_UNCONST(host);
    g.binary = PV_UNCONST(binary);
    g.port = port;
    g.count = count;
    g.ssrf = ssrf;
    g.scope = PV_UNCONST("");
    g.nsamples = nsamples < ADVISOR_MAPPER_SAMPLES ? nsamples : ADVISOR_MAPPER_SAMPLES;
    for (size_t i = 0; i < g.nsamples; i++) {
        g.samples[i].method = PV_UNCONST(methods[i]);
        g.samples[i].path = PV_UNCONST(paths[i]);
    }
    return mapper_proposal(&g, prior, allow_loopback, confidence, NULL);
}

json_t *advisor_mapper_proposal_events(const char *host, int64_t port, const char *binary,
                                       const json_t *events, const json_t *prior,
                                       bool allow_loopback, double *confidence)
{
    struct mapper_group g;
    json_t *out;
    const json_t *first = json_array_get(events, 0);

    memset(&g, 0, sizeof(g));
    g.host = PV_UNCONST(host);
    g.binary = PV_UNCONST(binary);
    g.port = port;
    g.count = (int64_t)json_array_size(events);
    const char *sc = "";
    g.kind = event_kind(first, &sc);
    g.scope = PV_UNCONST(sc);
    for (size_t i = 0; i < json_array_size(events) && g.nsamples < ADVISOR_MAPPER_SAMPLES; i++) {
        const json_t *ev = json_array_get(events, i);
        const char *scope = "";
        if (event_kind(ev, &scope) != g.kind || strcmp(scope, g.scope) != 0) {
            continue; /* another group's */
        }
        g.samples[g.nsamples].method = PV_UNCONST(json_string_value(json_object_get(ev, "method")));
        g.samples[g.nsamples].path = PV_UNCONST(json_string_value(json_object_get(ev, "path")));
        g.samples[g.nsamples].op = kind_is_rpc(g.kind) ? call_of(json_object_get(ev, "rpc"), g.kind)
                                                       : gql_of(json_object_get(ev, "graphql"));
        if (g.samples[g.nsamples].method != NULL && g.samples[g.nsamples].path != NULL) {
            g.nsamples++;
        } else {
            json_decref(g.samples[g.nsamples].op);
        }
    }
    out = mapper_proposal(&g, prior, allow_loopback, confidence, NULL);
    for (size_t i = 0; i < g.nsamples; i++) {
        json_decref(g.samples[i].op);
    }
    return out;
}

/* ===========================================================================
 * The table
 * ========================================================================= */

static uint32_t key_hash(const char *sb, const char *host, int64_t port, const char *bin,
                         const char *scope)
{
    uint32_t h = 2166136261u;
    const char *parts[] = {sb, host, bin, scope};

    for (size_t i = 0; i < PV_ARRAY_LEN(parts); i++) {
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p != '\0'; p++) {
            h = (h ^ *p) * 16777619u;
        }
        h = (h ^ 0xffu) * 16777619u;
    }
    return (h ^ (uint32_t)port) * 16777619u;
}

static void group_free(struct mapper_group *g)
{
    free(g->sandbox);
    free(g->host);
    free(g->binary);
    free(g->stage);
    free(g->scope);
    for (size_t i = 0; i < g->nsamples; i++) {
        free(g->samples[i].method);
        free(g->samples[i].path);
        json_decref(g->samples[i].op);
    }
    free(g);
}

/* A denial's field is text a reviewer will read in the proposal: a Unicode
 * format character (bidi control, zero-width) drops it here, so one such
 * path cannot make the model refuse its whole group's proposal. */
static bool field_ok(const char *s)
{
    uint32_t cp;
    size_t off;

    return s != NULL && s[0] != '\0' && strlen(s) < MAPPER_FIELD_MAX &&
           pv_text_check((const unsigned char *)s, strlen(s), &cp, &off) == PV_TEXT_OK;
}

/* One event into the table (under mu). False when it was dropped. */
/* long: one event's steps in order (fields, the recent ring, call denials, the group, its
 * samples), each a few lines; split, the steps would pass the same eight locals around */
static bool add_event(struct advisor_mapper *m, const char *sandbox, const json_t *ev, int64_t now)
{
    const char *host = json_string_value(json_object_get(ev, "host"));
    const char *bin = json_string_value(json_object_get(ev, "binary"));
    const char *stage = json_string_value(json_object_get(ev, "stage"));
    const char *method = json_string_value(json_object_get(ev, "method"));
    const char *path = json_string_value(json_object_get(ev, "path"));
    json_int_t port = json_integer_value(json_object_get(ev, "port"));
    char lower[256];
    struct mapper_group *g;
    uint32_t b;
    const char *scope = "";
    enum mapper_kind kind = event_kind(ev, &scope);
    json_t *op = NULL;

    if (!field_ok(host) || !model_host_lower(host, lower, sizeof(lower)) || port < 1 ||
        port > 65535) {
        return false;
    }
    if (!field_ok(bin)) {
        bin = "-";
    }
    advisor_recent_add(m->a->recent, sandbox, lower, port, bin,
                       field_ok(method) && strlen(method) < 16 ? method : NULL,
                       field_ok(path) && path[0] == '/' ? path : NULL);
    if (rpc_event(ev) && !kind_is_rpc(kind)) {
        /* refused on a JSON-RPC / MCP endpoint without a call it read (an
         * unreadable body, an unknown protocol): only a call rule on its
         * endpoint lifts a call, and a REST rule for POST on that path would
         * open the path uninspected beside it (docs/semantics.md#rpc) */
        return false;
    }
    if (kind != MAPPER_REST && !field_ok(scope)) {
        kind = MAPPER_REST;
        scope = "";
    }
    b = key_hash(sandbox, lower, port, bin, scope) % MAPPER_BUCKETS;
    for (g = m->buckets[b]; g != NULL; g = g->next) {
        if (g->port == port && g->kind == kind && strcmp(g->host, lower) == 0 &&
            strcmp(g->binary, bin) == 0 && strcmp(g->scope, scope) == 0 &&
            strcmp(g->sandbox, sandbox) == 0) {
            break;
        }
    }
    if (g == NULL) {
        if (m->ngroups >= MAPPER_GROUPS_MAX) {
            return false;
        }
        g = pv_calloc(1, sizeof(*g));
        if (g == NULL) {
            return false;
        }
        g->sandbox = pv_strdup(sandbox);
        g->host = pv_strdup(lower);
        g->binary = pv_strdup(bin);
        g->stage = pv_strdup(field_ok(stage) && strlen(stage) < 64 ? stage : "");
        g->kind = kind;
        g->scope = pv_strdup(scope);
        g->port = port;
        g->first_ms = now;
        if (g->sandbox == NULL || g->host == NULL || g->binary == NULL || g->stage == NULL ||
            g->scope == NULL) {
            group_free(g);
            return false;
        }
        g->next = m->buckets[b];
        m->buckets[b] = g;
        m->ngroups++;
    }
    g->count++;
    g->last_ms = now;
    if (stage != NULL && strcmp(stage, "ssrf") == 0) {
        g->ssrf = true;
    }
    op = kind_is_rpc(kind)     ? call_of(json_object_get(ev, "rpc"), kind)
         : kind != MAPPER_REST ? gql_of(json_object_get(ev, "graphql"))
                               : NULL;
    if ((kind == MAPPER_GRAPHQL || kind_is_rpc(kind)) && op == NULL) {
        return true; /* counted; no operation or call a rule could name */
    }
    if (field_ok(method) && field_ok(path) && path[0] == '/' && strlen(method) <= 16 &&
        g->nsamples < ADVISOR_MAPPER_SAMPLES) {
        size_t i = 0;
        while (i < g->nsamples &&
               (strcmp(g->samples[i].method, method) != 0 ||
                strcmp(g->samples[i].path, path) != 0 ||
                !(op == NULL ? g->samples[i].op == NULL : json_equal(op, g->samples[i].op)))) {
            i++;
        }
        if (i == g->nsamples) {
            char *mm = pv_strdup(method);
            char *pp = pv_strdup(path);
            if (mm == NULL || pp == NULL) {
                free(mm);
                free(pp);
            } else {
                g->samples[g->nsamples].method = mm;
                g->samples[g->nsamples].path = pp;
                g->samples[g->nsamples].op = op;
                op = NULL;
                g->nsamples++;
            }
        }
    }
    json_decref(op);
    return true;
}

pv_result advisor_mapper_ingest(struct advisor_mapper *m, const char *sandbox, const char *body,
                                size_t len, struct advisor_view *out)
{
    json_error_t jerr;
    json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *events = json_object_get(doc, "events");
    json_int_t reported = json_integer_value(json_object_get(doc, "dropped"));
    int64_t now = advisor_now_ms();
    size_t accepted = 0;
    size_t dropped = 0;
    pv_result res;

    memset(out, 0, sizeof(*out));
    if (!json_is_array(events) || json_array_size(events) > MAPPER_EVENTS_MAX) {
        if (doc == NULL) {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST, "invalid JSON: %s",
                                      jerr.text);
        } else {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                      "body needs \"events\": a list of at most %u denials",
                                      MAPPER_EVENTS_MAX);
        }
        json_decref(doc);
        return res;
    }
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < json_array_size(events); i++) {
        if (add_event(m, sandbox, json_array_get(events, i), now)) {
            accepted++;
        } else {
            dropped++;
        }
    }
    m->dropped += (int64_t)dropped + (reported > 0 ? reported : 0);
    pthread_mutex_unlock(&m->mu);
    json_decref(doc);
    out->json =
        json_pack("{s:I,s:I}", "accepted", (json_int_t)accepted, "dropped", (json_int_t)dropped);
    return out->json != NULL ? PV_RESULT_OK
                             : advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
}

/* ===========================================================================
 * Flushing
 * ========================================================================= */

/* The allow rules of the pending mechanistic chunk with this group's key
 * (what earlier flushes saw), or NULL. */
static json_t *prior_rules(struct advisor_worker *w, const struct mapper_group *g)
{
    struct store_sandbox sb;
    struct store_chunk c;
    char key[2400];
    json_t *rules = NULL;

    if (!pv_ok(store_sandbox_get(w->st, g->sandbox, &sb))) {
        return NULL;
    }
    advisor_dedup_key(g->host, g->port, g->binary,
                      g->kind == MAPPER_GRAPHQL     ? "graphql"
                      : g->kind == MAPPER_WEBSOCKET ? "websocket"
                                                    : NULL,
                      g->scope, key, sizeof(key));
    if (pv_ok(store_chunk_by_dedup(w->st, sb.id, key, &c))) {
        if (strcmp(c.status, "pending") == 0) {
            json_t *rule = json_loads(c.proposed_rule, 0, NULL);
            rules = json_incref(
                json_object_get(json_array_get(json_object_get(rule, "endpoints"), 0), "rules"));
            json_decref(rule);
        }
        store_chunk_clear(&c);
    }
    store_sandbox_clear(&sb);
    return rules;
}

static void submit_group(struct advisor_mapper *m, struct advisor_worker *w,
                         const struct mapper_group *g)
{
    struct advisor_submit_meta meta;
    struct advisor_proposal p = {0};
    struct advisor_submission o;
    json_t *prior = prior_rules(w, g);
    pv_result res;

    p.doc = mapper_proposal(g, prior, m->a->cfg.test_allow_loopback, &meta.confidence, &p.model);
    json_decref(prior);
    if (p.doc == NULL) {
        advisor_proposal_clear(&p);
        return; /* always-blocked, or nothing to name */
    }
    meta.hits = g->count;
    meta.first_seen_ms = g->first_ms;
    meta.last_seen_ms = g->last_ms;
    meta.stage = g->stage[0] != '\0' ? g->stage : "mechanistic";
    res = advisor_submit(w, g->sandbox, "mechanistic", &meta, &p, &o);
    if (!pv_ok(res)) {
        pv_log_warnx("mapper: %s: %s:%lld %s: %s", g->sandbox, g->host, (long long)g->port,
                     g->binary,
                     res.err == PV_ERR_USAGE      ? "proposals are not enabled in this sandbox"
                     : res.err == PV_ERR_NOTFOUND ? "sandbox not found"
                                                  : pv_strerror(res.err));
    } else if (o.accepted == 0 && json_array_size(o.reasons) > 0) {
        pv_log_warnx("mapper: %s: %s:%lld %s: %s", g->sandbox, g->host, (long long)g->port,
                     g->binary, json_string_value(json_array_get(o.reasons, 0)));
    }
    advisor_submission_clear(&o);
    advisor_proposal_clear(&p);
}

void advisor_mapper_flush(struct advisor_mapper *m, struct advisor_worker *w)
{
    struct mapper_group *list = NULL;
    int64_t dropped;

    pthread_mutex_lock(&m->mu);
    for (size_t b = 0; b < MAPPER_BUCKETS; b++) {
        while (m->buckets[b] != NULL) {
            struct mapper_group *g = m->buckets[b];
            m->buckets[b] = g->next;
            g->next = list;
            list = g;
        }
    }
    m->ngroups = 0;
    dropped = m->dropped;
    m->dropped = 0;
    pthread_mutex_unlock(&m->mu);
    if (dropped > 0) {
        pv_log_warnx("mapper: %lld denial(s) dropped since the last flush (bounded queues)",
                     (long long)dropped);
    }
    while (list != NULL) {
        struct mapper_group *g = list;
        list = g->next;
        submit_group(m, w, g);
        group_free(g);
    }
}

/* One flush at a time across replicas on one database (a session lock,
 * docs/scale-out.md#replicas): two replicas flushing the same group at
 * once would both find no pending chunk for its key and propose it twice.
 * A replica that does not get the lock keeps its table for the next
 * interval. The lock is taken on a handle of its own ('*lock', opened
 * here the first time, with a connection outside the shared pool): held
 * through the flush, a pooled connection would be one the flush's own
 * submissions, and the workers, wait for. */
static void flush_owned(struct advisor_mapper *m, struct advisor_worker *w, struct store **lock)
{
    char err[512];
    bool got = false;

    if (*lock == NULL &&
        !pv_ok(store_open_own(advisor_store_location(m->a), lock, err, sizeof(err)))) {
        pv_log_errorx("mapper: %s", err);
        return;
    }
    if (!pv_ok(store_try_lock(*lock, STORE_LOCK_MAPPER, &got)) || !got) {
        return;
    }
    advisor_mapper_flush(m, w);
    store_unlock(*lock, STORE_LOCK_MAPPER);
}

static void *flusher(void *arg)
{
    struct advisor_mapper *m = arg;
    /* NULL when it could not be made (out of memory, a store that was
     * down): made again before the next flush that has groups, or the
     * table would never be flushed in this process's life */
    struct advisor_worker *w = advisor_worker_new(m->a);
    struct store *lock = NULL;

    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        struct timespec ts;
        pv_deadline(&ts, CLOCK_REALTIME, m->flush_ms);
        (void)pthread_cond_timedwait(&m->cv, &m->mu, &ts);
        if (m->stop || m->ngroups == 0) {
            continue;
        }
        pthread_mutex_unlock(&m->mu);
        if (w == NULL) {
            w = advisor_worker_new(m->a);
        }
        if (w != NULL) {
            flush_owned(m, w, &lock);
        }
        pthread_mutex_lock(&m->mu);
    }
    pthread_mutex_unlock(&m->mu);
    store_close(lock);
    advisor_worker_free(w);
    return NULL;
}

struct advisor_mapper *advisor_mapper_new(struct advisor *a, unsigned flush_ms, bool start)
{
    struct advisor_mapper *m = pv_calloc(1, sizeof(*m));

    if (m == NULL) {
        return NULL;
    }
    m->a = a;
    m->flush_ms = flush_ms > 0 ? flush_ms : ADVISOR_MAPPER_FLUSH_MS;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    if (start) {
        if (pthread_create(&m->tid, NULL, flusher, m) != 0) {
            advisor_mapper_free(m);
            return NULL;
        }
        m->started = true;
    }
    return m;
}

void advisor_mapper_free(struct advisor_mapper *m)
{
    if (m == NULL) {
        return;
    }
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (m->started) {
        pthread_join(m->tid, NULL);
    }
    for (size_t b = 0; b < MAPPER_BUCKETS; b++) {
        while (m->buckets[b] != NULL) {
            struct mapper_group *g = m->buckets[b];
            m->buckets[b] = g->next;
            group_free(g);
        }
    }
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}
