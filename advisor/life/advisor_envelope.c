/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_envelope.c - the default auto-approval envelope
 * (docs/advisor.md#envelope)
 *
 * The prover's categories say what a change grants that is dangerous by
 * kind (credentials, private reach, metadata, bypass). They do not say how
 * broad it is: every binary under /usr/bin with opaque reach to any name
 * under pastebin.com has no finding at all. In auto mode a chunk is approved without a reviewer
 * only when, beside an empty verdict, every grant is within an envelope a
 * security engineer would sign - built in, on by default:
 *
 *   exact_binary     the binary is an exact path (breadth.binary "exact")
 *   exact_host       the host is an exact name or address (breadth.host)
 *   inspected_route  the route is inspected and enforced: no opaque L4, no
 *                    audit mode, no `protocol: tcp`, no `tls: skip`
 *   explicit_rules   explicit methods: no `access` preset, no `*` method,
 *                    nothing whose methods are "all"; GraphQL rules name
 *                    their operation type (not `*`) and their root fields
 *                    (no glob)
 *   no_new_port      no new port on a host the policy already reaches
 *                    (exactly or through a wildcard)
 *   no_endpoint_flags no switch that widens the endpoint's path rules
 *                    (allow_encoded_slash); not relaxable
 *
 * Each clause can be relaxed by a setting (envelope_allow_*), and the whole
 * envelope turned off (auto_approval_envelope: false); the operator's
 * boundary, when set, still applies on top. The breadth marks come from the
 * prover's grants (docs/semantics.md#grant-breadth): one definition, read
 * here and shown to reviewers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "model/model.h"

/* A bool setting; unset or not a bool: its default (common/pv_settings.h). */
static bool setting_bool(struct store *st, const char *sandbox, const char *key)
{
    const char *from;
    const struct pv_setting_row *row = pv_setting_find(key);
    json_t *v = advisor_setting_resolve(st, sandbox, key, &from);
    /* the default's text, not parsed: no allocation can turn it over */
    bool on = json_is_boolean(v)
                  ? json_is_true(v)
                  : row != NULL && row->dflt != NULL && strcmp(row->dflt, "true") == 0;

    json_decref(v);
    return on;
}

void advisor_envelope_get(struct store *st, const char *sandbox, struct advisor_envelope *out)
{
    out->on = setting_bool(st, sandbox, ADVISOR_SET(ENVELOPE));
    out->binary_globs = setting_bool(st, sandbox, ADVISOR_SET(ENV_BINARY_GLOBS));
    out->host_wildcards = setting_bool(st, sandbox, ADVISOR_SET(ENV_HOST_WILDCARDS));
    out->uninspected = setting_bool(st, sandbox, ADVISOR_SET(ENV_UNINSPECTED));
    out->access_presets = setting_bool(st, sandbox, ADVISOR_SET(ENV_ACCESS_PRESETS));
    out->new_ports = setting_bool(st, sandbox, ADVISOR_SET(ENV_NEW_PORTS));
}

/* "+ BINARY -> HOST:PORTS ROUTE" of a grant, for a note. */
static void grant_text(const json_t *g, char *out, size_t len)
{
    const char *host = json_string_value(json_object_get(g, "host"));
    const char *peer = json_string_value(json_object_get(g, "target_sandbox"));
    const char *bin = json_string_value(json_object_get(g, "binary"));
    const char *route = json_string_value(json_object_get(g, "route"));
    const json_t *ports = json_object_get(g, "ports");
    char plist[64] = "";
    size_t i;
    const json_t *p;

    json_array_foreach(ports, i, p)
    {
        size_t at = strlen(plist);
        snprintf(plist + at, sizeof(plist) - at, "%s%lld", i > 0 ? "," : "",
                 (long long)json_integer_value(p));
    }
    snprintf(out, len, "%.300s -> %.300s:%s %s", bin != NULL ? bin : "?",
             host != NULL && host[0] != '\0' ? host
             : peer != NULL                  ? peer
                                             : "(hostless)",
             plist, route != NULL ? route : "?");
}

/* Record that the rule is outside the envelope by 'clause'. The first
 * clause is said in full ("outside the auto-approval envelope (CLAUSE):
 * WHAT: GRANT; a reviewer must decide, or set SETTING"); every other
 * clause the rule fails is named after it (" Also outside (CLAUSE): WHAT,
 * or set SETTING."), once each, so a reviewer learns every setting the
 * rule would need, not only the first. Returns false. */
static bool outside(char *note, size_t len, const char *clause, const char *what,
                    const json_t *grant, const char *setting)
{
    char g[700] = "";
    char tag[64];
    size_t at = strlen(note);

    snprintf(tag, sizeof(tag), "(%s)", clause);
    if (strstr(note, tag) != NULL) {
        return false;
    }
    if (at == 0) {
        if (grant != NULL) {
            grant_text(grant, g, sizeof(g));
        }
        snprintf(note, len,
                 "outside the auto-approval envelope (%s): %s%s%s; a reviewer must decide%s%s",
                 clause, what, g[0] != '\0' ? ": " : "", g, setting != NULL ? ", or set " : "",
                 setting != NULL ? setting : "");
    } else if (at < len) {
        snprintf(note + at, len - at, "%s Also outside (%s): %s%s%s.",
                 note[at - 1] == '.' ? "" : ".", clause, what, setting != NULL ? ", or set " : "",
                 setting != NULL ? setting : "");
    }
    return false;
}

/* What a grant admits, from its access lines: a GraphQL unit's lines start
 * "GraphQL ", a json-rpc or mcp unit's "call " (prover/prover_grants.c). */
static const char *grant_kind(const json_t *g)
{
    const json_t *a = json_array_get(json_object_get(g, "access"), 0);
    const char *s = json_string_value(a);

    if (s != NULL && strncmp(s, "GraphQL ", 8) == 0) {
        return "graphql";
    }
    if (s != NULL && strncmp(s, "call ", 5) == 0) {
        return "rpc";
    }
    return "rest";
}

static bool breadth_is(const json_t *g, const char *field, const char *want)
{
    const char *v = json_string_value(json_object_get(json_object_get(g, "breadth"), field));

    return v != NULL && strcmp(v, want) == 0;
}

/* A GraphQL allow rule is explicit when it names its operation type (not
 * `*`) and its root fields, each a name without a glob character: `fields`
 * absent allows every root field of the type, `create*` every field that
 * begins so (docs/advisor.md#envelope). Other rules: true. */
static bool gql_explicit(const json_t *al, char *note, size_t len)
{
    const char *t = json_string_value(json_object_get(al, "operation_type"));
    const json_t *fields = json_object_get(al, "fields");
    size_t i;
    const json_t *f;

    if (json_object_get(al, "operation_type") == NULL) {
        return true;
    }
    if (t == NULL || strcmp(t, "*") == 0) {
        return outside(note, len, "explicit_rules", "operation_type '*' allows every operation",
                       NULL, ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    if (json_array_size(fields) == 0) {
        return outside(note, len, "explicit_rules",
                       "a GraphQL rule without fields allows every root field", NULL,
                       ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    json_array_foreach(fields, i, f)
    {
        const char *v = json_string_value(f);
        if (v == NULL || strpbrk(v, "*?[]{}\\") != NULL) {
            return outside(note, len, "explicit_rules",
                           "a GraphQL field glob allows root fields nobody named", NULL,
                           ADVISOR_SET(ENV_ACCESS_PRESETS));
        }
    }
    return true;
}

static bool has_glob(const char *v)
{
    return v == NULL || strpbrk(v, "*?[]{}\\") != NULL;
}

/* Whether a tool selector's patterns are all exact names: `tool: NAME`,
 * `params: {name: NAME}`, `{glob: NAME}` or `{any: [NAME...]}`. */
static bool tools_exact(const json_t *al)
{
    const json_t *t = json_object_get(al, "tool");
    const json_t *n = json_object_get(json_object_get(al, "params"), "name");
    const json_t *any;
    const json_t *x;
    size_t i;

    if (t != NULL) {
        return !has_glob(json_string_value(t));
    }
    if (json_is_string(n)) {
        return !has_glob(json_string_value(n));
    }
    if (json_object_get(n, "glob") != NULL) {
        return !has_glob(json_string_value(json_object_get(n, "glob")));
    }
    any = json_object_get(n, "any");
    json_array_foreach(any, i, x)
    {
        if (has_glob(json_string_value(x))) {
            return false;
        }
    }
    return true;
}

/* A call allow rule is explicit when it names its method and, for an MCP
 * tools/call, its tools, each without a glob character: a method glob
 * admits every tools/ method it matches, `search_*` every tool that begins so, and a
 * tools/call rule without a tool every tool (docs/advisor.md#envelope).
 * Method `*` is rule_within's own note. */
static bool rpc_explicit(const json_t *ep, const json_t *al, char *note, size_t len)
{
    const char *proto = json_string_value(json_object_get(ep, "protocol"));
    const char *m = json_string_value(json_object_get(al, "method"));
    bool mcp = proto != NULL && strcmp(proto, "mcp") == 0;
    bool tool = json_object_get(al, "tool") != NULL ||
                json_object_get(json_object_get(al, "params"), "name") != NULL;
    bool within = true;

    if (m != NULL && strcmp(m, "*") != 0 && has_glob(m)) {
        within = outside(note, len, "explicit_rules", "a method glob allows calls nobody named",
                         NULL, ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    if (!mcp) {
        return within;
    }
    if (!tool && m != NULL && strcmp(m, "tools/call") == 0) {
        within = outside(note, len, "explicit_rules",
                         "a tools/call rule without a tool allows every tool", NULL,
                         ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    if (tool && !tools_exact(al)) {
        within = outside(note, len, "explicit_rules", "a tool glob allows tools nobody named", NULL,
                         ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    return within;
}

/* The rule's own words that the grants do not show: access presets, `*`
 * methods, call and GraphQL globs, `protocol: tcp`, `tls: skip`. (A
 * proposal cannot carry an endpoint's `mcp` options: the method profile
 * is the operator's to turn on, model_policy_merge_rule refuses it.) */
static bool rule_within(const struct advisor_envelope *env, const json_t *rule, char *note,
                        size_t len)
{
    size_t i;
    const json_t *ep;
    bool within = true;

    json_array_foreach(json_object_get(rule, "endpoints"), i, ep)
    {
        const char *proto = json_string_value(json_object_get(ep, "protocol"));
        const char *tls = json_string_value(json_object_get(ep, "tls"));
        size_t k;
        const json_t *r;

        if (!env->uninspected && proto != NULL && strcmp(proto, "tcp") == 0) {
            within = outside(note, len, "inspected_route", "protocol: tcp is not inspected", NULL,
                             ADVISOR_SET(ENV_UNINSPECTED));
        }
        if (!env->uninspected && tls != NULL && strcmp(tls, "skip") == 0) {
            within = outside(note, len, "inspected_route", "tls: skip is not inspected", NULL,
                             ADVISOR_SET(ENV_UNINSPECTED));
        }
        if (env->access_presets) {
            continue;
        }
        if (json_object_get(ep, "access") != NULL) {
            char what[96];
            snprintf(what, sizeof(what),
                     "access: %.40s is a preset, not explicit methods and paths",
                     json_string_value(json_object_get(ep, "access")) != NULL
                         ? json_string_value(json_object_get(ep, "access"))
                         : "?");
            within =
                outside(note, len, "explicit_rules", what, NULL, ADVISOR_SET(ENV_ACCESS_PRESETS));
            continue;
        }
        json_array_foreach(json_object_get(ep, "rules"), k, r)
        {
            const char *m =
                json_string_value(json_object_get(json_object_get(r, "allow"), "method"));
            if (m != NULL && strcmp(m, "*") == 0) {
                within = outside(note, len, "explicit_rules",
                                 advisor_protocol_is_rpc(ep) ? "method '*' allows every call"
                                                             : "method '*' allows every method",
                                 NULL, ADVISOR_SET(ENV_ACCESS_PRESETS));
            }
            if (!gql_explicit(json_object_get(r, "allow"), note, len)) {
                within = false;
            }
            if (advisor_protocol_is_rpc(ep) &&
                !rpc_explicit(ep, json_object_get(r, "allow"), note, len)) {
                within = false;
            }
        }
    }
    return within;
}

/* ---------------------------------------------------------------------------
 * no_new_port: the evaluator's host and port coverage
 *
 * "A host the policy reaches" is a host some endpoint of the policy in force
 * with a host matches, exactly as the evaluator matches it
 * (model_endpoint_matches_host: case, trailing dot, IP spellings, `*.` and
 * `**.` wildcards); no test of this file compares host text. A hostless
 * endpoint does not count: what it reaches is its allowed_ips, not a name.
 * For a grant whose host is itself a wildcard (only when the operator
 * allows wildcards) the model's language algebra looks for a name the
 * grant covers that the policy reaches on another port and not on the
 * grant's; a name found is re-checked with the evaluator's test, and a
 * search that reaches its bound or disagrees fails closed.
 * ------------------------------------------------------------------------- */

#define NEW_PORT_MAX_STATES 200000u /* the language search's bound */
#define NEW_PORT_MAX_TERMS 256u     /* endpoints one search may weigh */

enum new_port { NP_NO, NP_YES, NP_UNDECIDED };

/* Endpoint i of rule r of 'p', as one flat index; NULL past the end. */
static const struct model_endpoint *nth_endpoint(const struct model_policy *p, size_t *r, size_t *e)
{
    while (*r < model_policy_nrules(p)) {
        const struct model_rule *rule = model_policy_rule(p, *r);
        if (*e < model_rule_nendpoints(rule)) {
            return model_rule_endpoint(rule, (*e)++);
        }
        (*r)++;
        *e = 0;
    }
    return NULL;
}

static bool hosted(const struct model_endpoint *ep)
{
    const char *h = model_endpoint_host(ep);

    return h != NULL && h[0] != '\0';
}

/* Does 'cur' reach concrete host 'host' through an endpoint with a host
 * ('*reached'), and through one that lists 'port' ('*listed')? */
static void host_ports(const struct model_policy *cur, const char *host, uint16_t port,
                       bool *reached, bool *listed)
{
    size_t r = 0;
    size_t i = 0;
    const struct model_endpoint *ep;

    *reached = false;
    *listed = false;
    while ((ep = nth_endpoint(cur, &r, &i)) != NULL) {
        if (hosted(ep) && model_endpoint_matches_host(ep, host, strlen(host))) {
            *reached = true;
            *listed = *listed || model_endpoint_has_port(ep, port);
        }
    }
}

/* The terms of one search: a name of 'g' and of endpoint 'ep' that no
 * endpoint listing 'port' matches. IP endpoints never meet a wildcard. */
static size_t search_terms(const struct model_policy *cur, const struct model_glob *g,
                           const struct model_endpoint *ep, uint16_t port,
                           struct model_lang_term *t)
{
    struct model_endpoint_view v;
    size_t n = 0;
    size_t r = 0;
    size_t i = 0;
    const struct model_endpoint *f;

    model_endpoint_view(ep, &v);
    t[n++] = (struct model_lang_term){g, true};
    t[n++] = (struct model_lang_term){v.host_glob, true};
    while ((f = nth_endpoint(cur, &r, &i)) != NULL) {
        model_endpoint_view(f, &v);
        if (!hosted(f) || v.host_is_ip || !model_endpoint_has_port(f, port)) {
            continue;
        }
        if (n == NEW_PORT_MAX_TERMS || v.host_glob == NULL) {
            return 0; /* too many to weigh, or not compiled: undecided */
        }
        t[n++] = (struct model_lang_term){v.host_glob, false};
    }
    return n;
}

/* Does endpoint 'ep' of 'cur' share a name with wildcard 'g' that 'cur'
 * reaches on no endpoint listing 'port'? The name into 'out'. */
static enum new_port wild_meets(const struct model_policy *cur, const struct model_glob *g,
                                const struct model_endpoint *ep, uint16_t port, char *out,
                                size_t len)
{
    struct model_lang_term t[NEW_PORT_MAX_TERMS];
    size_t n = search_terms(cur, g, ep, port, t);
    char *name = NULL;
    size_t nlen = 0;
    bool reached = false;
    bool listed = true;
    enum new_port res = NP_UNDECIDED;

    if (n == 0 || t[1].g == NULL) {
        return NP_UNDECIDED;
    }
    switch (model_lang_check(MODEL_DOMAIN_DNS_NAME, t, n, NEW_PORT_MAX_STATES, &name, &nlen)) {
    case MODEL_LANG_EMPTY:
        return NP_NO;
    case MODEL_LANG_NONEMPTY:
        break;
    case MODEL_LANG_LIMIT:
    case MODEL_LANG_NOMEM:
        return NP_UNDECIDED;
    }
    if (name != NULL && model_glob_match(g, name, nlen)) {
        host_ports(cur, name, port, &reached, &listed);
        res = reached && !listed ? NP_YES : NP_UNDECIDED; /* a disagreement fails closed */
        snprintf(out, len, "%s", name);
    }
    free(name);
    return res;
}

/* A name of wildcard grant host 'host' that 'cur' reaches, and not on
 * 'port'. */
static enum new_port wild_new_port(const struct model_policy *cur, const char *host, uint16_t port,
                                   char *out, size_t len)
{
    const char *why = NULL;
    struct model_glob *g = model_glob_compile(MODEL_GLOB_HOST, host, strlen(host), &why);
    enum new_port res = g != NULL ? NP_NO : NP_UNDECIDED;
    size_t r = 0;
    size_t i = 0;
    const struct model_endpoint *ep;

    while (res == NP_NO && (ep = nth_endpoint(cur, &r, &i)) != NULL) {
        struct model_endpoint_view v;
        model_endpoint_view(ep, &v);
        if (hosted(ep) && !v.host_is_ip && !model_endpoint_has_port(ep, port)) {
            res = wild_meets(cur, g, ep, port, out, len);
        }
    }
    model_glob_free(g);
    return res;
}

/* A new port on a host the policy already reaches: some port of grant 'g'
 * on a host of g's that an endpoint of 'cur' reaches, and none on that
 * port. What was found goes into 'what'. */
static bool new_port(const struct model_policy *cur, const json_t *g, char *what, size_t len)
{
    const char *host = json_string_value(json_object_get(g, "host"));
    char lower[256];
    char name[256] = "";
    size_t k;
    const json_t *p;

    if (host == NULL || host[0] == '\0') {
        return false; /* hostless: exact_host's to refuse */
    }
    if (!model_host_lower(host, lower, sizeof(lower))) {
        snprintf(what, len, "a host too long to compare");
        return true;
    }
    json_array_foreach(json_object_get(g, "ports"), k, p)
    {
        json_int_t port = json_integer_value(p);
        enum new_port res = NP_UNDECIDED;
        if (port >= 1 && port <= 65535 && strchr(lower, '*') == NULL) {
            bool reached = false;
            bool listed = false;
            host_ports(cur, lower, (uint16_t)port, &reached, &listed);
            res = reached && !listed ? NP_YES : NP_NO;
            snprintf(name, sizeof(name), "%s", lower);
        } else if (port >= 1 && port <= 65535) {
            res = wild_new_port(cur, lower, (uint16_t)port, name, sizeof(name));
        }
        if (res != NP_NO) {
            snprintf(what, len, "a new port on a host the policy reaches (%s %lld on %.200s)",
                     res == NP_YES ? "port" : "could not rule out port", (long long)port,
                     name[0] != '\0' ? name : lower);
            return true;
        }
    }
    return false;
}

bool advisor_envelope_within(const struct advisor_envelope *env, const struct model_policy *current,
                             const json_t *rule, const json_t *grants, char *note, size_t len)
{
    size_t i;
    const json_t *g;
    char what[400];
    bool within = true;

    note[0] = '\0';
    if (!env->on) {
        return true;
    }
    if (!json_is_array(grants)) {
        return outside(note, len, "grants", "the prover's answer lists no grants", NULL, NULL);
    }
    json_array_foreach(grants, i, g)
    {
        const char *kind = grant_kind(g);

        if (json_object_get(g, "breadth") == NULL) {
            return outside(note, len, "grants", "a grant without breadth marks", g, NULL);
        }
        if (!env->binary_globs && !breadth_is(g, "binary", "exact")) {
            within = outside(note, len, "exact_binary", "the binary is a glob", g,
                             ADVISOR_SET(ENV_BINARY_GLOBS));
        }
        if (!env->host_wildcards && !breadth_is(g, "host", "exact")) {
            within = outside(note, len, "exact_host",
                             breadth_is(g, "host", "hostless") ? "the endpoint has no host"
                                                               : "the host is a wildcard",
                             g, ADVISOR_SET(ENV_HOST_WILDCARDS));
        }
        if (!env->uninspected && !breadth_is(g, "route", "inspected")) {
            within =
                outside(note, len, "inspected_route",
                        breadth_is(g, "route", "audit") ? "an audit-mode route passes every request"
                                                        : "an opaque route is not inspected",
                        g, ADVISOR_SET(ENV_UNINSPECTED));
        }
        /* On an opaque or audit route every method passes: that is the
         * inspected_route clause's to refuse or to allow. */
        if (!env->access_presets && breadth_is(g, "route", "inspected") &&
            breadth_is(g, "methods", "all")) {
            within = outside(note, len, "explicit_rules",
                             strcmp(kind, "graphql") == 0 ? "every GraphQL operation is allowed"
                             : strcmp(kind, "rpc") == 0   ? "every call is allowed"
                                                          : "every method is allowed",
                             g, ADVISOR_SET(ENV_ACCESS_PRESETS));
        }
        if (json_array_size(json_object_get(g, "flags")) > 0) {
            /* allow_encoded_slash widens every path rule of the endpoint
             * (docs/semantics.md#encoded-slash): never without a reviewer */
            within = outside(note, len, "no_endpoint_flags",
                             "the endpoint turns on allow_encoded_slash", g, NULL);
        }
        if (!env->new_ports && new_port(current, g, what, sizeof(what))) {
            within = outside(note, len, "no_new_port", what, g, ADVISOR_SET(ENV_NEW_PORTS));
        }
    }
    return rule_within(env, rule, note, len) && within;
}
