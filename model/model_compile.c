/* SPDX-License-Identifier: Apache-2.0 */
/* model_compile.c - compile a validated policy for the evaluator
 *
 * model_policy_compile() compiles every pattern of a validated policy (host,
 * path, binary and query globs), expands access presets into eff_rules,
 * stores each endpoint's fingerprint and its hash, builds the evaluator index
 * (model_index.c) and the network digest. It first drops what an earlier
 * compile left, and a failed compile leaves no compiled field behind.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "common/pv_hash.h"
#include "model/model_int.h"

/* ===========================================================================
 * Compilation
 * ========================================================================= */

static pv_result compile_glob(enum model_glob_kind kind, const char *s, struct model_glob **out)
{
    const char *why = NULL;

    *out = model_glob_compile(kind, s, strlen(s), &why);
    if (*out == NULL) {
        pv_debug_str = why;
        PV_BAIL(pv_errno != PV_OK ? pv_errno : PV_ERR_PATTERN);
    }
    return PV_RESULT_OK;
}

static void l7rule_uncompile(struct model_l7rule *r)
{
    model_glob_free(r->path_glob);
    r->path_glob = NULL;
    model_glob_free(r->name_glob);
    r->name_glob = NULL;
    if (r->field_globs != NULL) {
        for (size_t i = 0; i < r->fields.n; i++) {
            model_glob_free(r->field_globs[i]);
        }
        PV_SAFE_FREE(r->field_globs);
    }
    r->gql_types = 0;
    model_glob_free(r->rpc_method_glob);
    r->rpc_method_glob = NULL;
    if (r->tool_globs != NULL) {
        for (size_t i = 0; i < r->ntools; i++) {
            model_glob_free(r->tool_globs[i]);
        }
        PV_SAFE_FREE(r->tool_globs);
    }
    r->ntools = 0;
    for (size_t i = 0; i < r->nquery; i++) {
        struct model_query *q = &r->query[i];
        if (q->compiled != NULL) {
            for (size_t j = 0; j < q->globs.n; j++) {
                model_glob_free(q->compiled[j]);
            }
            PV_SAFE_FREE(q->compiled);
        }
    }
}

/*= docs/semantics.md#graphql-glob
 *# **Globs** in `operation_name` and `fields` use the query-glob dialect */
static pv_result gql_compile(struct model_l7rule *r)
{
    enum model_gql_optype t;

    if (r->operation_type.s == NULL) {
        return PV_RESULT_OK;
    }
    if (strcmp(r->operation_type.s, "*") == 0) {
        r->gql_types = 7u;
    } else if (model_gql_optype_parse(r->operation_type.s, &t)) {
        r->gql_types = (uint8_t)(1u << t);
    } else {
        /* validated away; a rule naming no type matches nothing */
        r->gql_types = 0x80u;
    }
    if (r->operation_name.s != NULL) {
        PV_GUARD(compile_glob(MODEL_GLOB_VALUE, r->operation_name.s, &r->name_glob));
    }
    if (r->fields.n > 0) {
        r->field_globs = pv_calloc(r->fields.n, sizeof(*r->field_globs));
        PV_GUARD_PTR(r->field_globs);
        for (size_t i = 0; i < r->fields.n; i++) {
            const char *g = r->fields.v[i].s != NULL ? r->fields.v[i].s : "";
            PV_GUARD(compile_glob(MODEL_GLOB_VALUE, g, &r->field_globs[i]));
        }
    }
    return PV_RESULT_OK;
}

/*= docs/semantics.md#rpc-rules
 *# Method and tool patterns of `mcp` rules are globs of the query dialect */
static pv_result rpc_compile(struct model_l7rule *r, enum model_protocol proto)
{
    size_t n = model_l7rule_ntools(r);

    if (proto != MODEL_PROTO_JSONRPC && proto != MODEL_PROTO_MCP) {
        return PV_RESULT_OK;
    }
    if (proto == MODEL_PROTO_MCP && r->method.s != NULL && r->method.s[0] != '\0') {
        PV_GUARD(compile_glob(MODEL_GLOB_VALUE, r->method.s, &r->rpc_method_glob));
    }
    if (n > 0) {
        r->tool_globs = pv_calloc(n, sizeof(*r->tool_globs));
        PV_GUARD_PTR(r->tool_globs);
        r->ntools = n;
        for (size_t i = 0; i < n; i++) {
            PV_GUARD(compile_glob(MODEL_GLOB_VALUE, model_l7rule_tool_at(r, i), &r->tool_globs[i]));
        }
    }
    return PV_RESULT_OK;
}

static pv_result l7rule_compile(struct model_l7rule *r, enum model_protocol proto)
{
    if (r->path.s != NULL && r->path.s[0] != '\0') {
        PV_GUARD(compile_glob(MODEL_GLOB_PATH, r->path.s, &r->path_glob));
    }
    PV_GUARD(gql_compile(r));
    PV_GUARD(rpc_compile(r, proto));
    for (size_t i = 0; i < r->nquery; i++) {
        struct model_query *q = &r->query[i];
        q->compiled = pv_calloc(q->globs.n > 0 ? q->globs.n : 1, sizeof(*q->compiled));
        PV_GUARD_PTR(q->compiled);
        for (size_t j = 0; j < q->globs.n; j++) {
            const char *g = q->globs.v[j].s != NULL ? q->globs.v[j].s : "";
            PV_GUARD(compile_glob(MODEL_GLOB_VALUE, g, &q->compiled[j]));
        }
    }
    return PV_RESULT_OK;
}

/* A preset rule on path "**": method for rest/websocket, operation type for
 * GraphQL. */
static pv_result preset_rule(struct model_l7rule *dst, const char *method, const char *optype,
                             struct model_mark mark)
{
    dst->mark = mark;
    if (method != NULL) {
        dst->method.s = pv_strdup(method);
        PV_GUARD_PTR(dst->method.s);
        dst->method.mark = mark;
    }
    if (optype != NULL) {
        dst->operation_type.s = pv_strdup(optype);
        PV_GUARD_PTR(dst->operation_type.s);
        dst->operation_type.mark = mark;
    }
    if (method == NULL) {
        /* a GraphQL rule has no path: as the merge's expansion writes it */
        return PV_RESULT_OK;
    }
    dst->path.s = pv_strdup("**");
    PV_GUARD_PTR(dst->path.s);
    dst->path.mark = mark;
    return PV_RESULT_OK;
}

/*= docs/semantics.md#methods
 *# Access presets expand at load time into rules on path `**`. */
static const char *const preset_rest_ro[] = {"GET", "HEAD", "OPTIONS"};
static const char *const preset_rest_rw[] = {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"};
static const char *const preset_full[] = {"*"};
static const char *const preset_ws_ro[] = {"GET"};
static const char *const preset_ws_rw[] = {"GET", "WEBSOCKET_TEXT"};
static const char *const preset_gql_ro[] = {"query"};
static const char *const preset_gql_rw[] = {"query", "mutation"};

/* The preset table: one row per inspected protocol, one column per
 * `access` value (enum model_access order); a NULL list expands to nothing. */
struct preset {
    const char *const *v;
    size_t n;
};
#define PRESET(a)            \
    {                        \
        (a), PV_ARRAY_LEN(a) \
    }
enum preset_kind { PK_REST, PK_WS, PK_GQL };
static const struct preset presets[][4] = {
    [PK_REST] = {{NULL, 0}, PRESET(preset_rest_ro), PRESET(preset_rest_rw), PRESET(preset_full)},
    [PK_WS] = {{NULL, 0}, PRESET(preset_ws_ro), PRESET(preset_ws_rw), PRESET(preset_full)},
    [PK_GQL] = {{NULL, 0}, PRESET(preset_gql_ro), PRESET(preset_gql_rw), PRESET(preset_full)},
};

static void preset_get(enum preset_kind k, enum model_access a, const char *const **list, size_t *n)
{
    *list = NULL;
    *n = 0;
    if ((unsigned)a < PV_ARRAY_LEN(presets[k])) {
        *list = presets[k][a].v;
        *n = presets[k][a].n;
    }
}

static void preset_list(const struct model_endpoint *e, const char *const **list, size_t *n,
                        bool *is_optype)
{
    *list = NULL;
    *n = 0;
    *is_optype = false;
    switch (e->proto) {
    case MODEL_PROTO_REST:
        preset_get(PK_REST, e->access_preset, list, n);
        return;
    case MODEL_PROTO_WEBSOCKET:
        preset_get(PK_WS, e->access_preset, list, n);
        return;
    case MODEL_PROTO_GRAPHQL:
        *is_optype = true;
        preset_get(PK_GQL, e->access_preset, list, n);
        return;
    case MODEL_PROTO_NONE:
    case MODEL_PROTO_TCP:
    case MODEL_PROTO_SQL:
    case MODEL_PROTO_JSONRPC:
    case MODEL_PROTO_MCP:
        return;
    }
}

/* A persisted registry entry as the operation it stands for. */
static pv_result persisted_compile(struct model_endpoint *e)
{
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        struct model_gql_persisted *g = &e->gql_persisted[i];

        PV_SAFE_FREE(g->op.fields);
        memset(&g->op, 0, sizeof(g->op));
        g->op_ok = model_gql_optype_parse(g->operation_type.s, &g->op.type);
        /* borrowed: the op never owns its strings here */
        g->op.name = g->operation_name.s;
        if (g->fields.n > 0) {
            g->op.fields = pv_calloc(g->fields.n, sizeof(char *));
            PV_GUARD_PTR(g->op.fields);
            for (size_t k = 0; k < g->fields.n; k++) {
                if (g->fields.v[k].s != NULL) {
                    g->op.fields[g->op.nfields++] = g->fields.v[k].s;
                }
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result endpoint_eff_rules(struct model_endpoint *e)
{
    const char *const *list;
    size_t n;
    bool is_optype;

    /*= docs/semantics.md#graphql-ws-rules
     *# An access preset on a websocket endpoint expands into its method rules
     *# only, also beside GraphQL deny rules */
    preset_list(e, &list, &n, &is_optype);
    if (e->nrules > 0 || n == 0) {
        if (e->nrules == 0) {
            return PV_RESULT_OK;
        }
        e->eff_rules = pv_calloc(e->nrules, sizeof(*e->eff_rules));
        PV_GUARD_PTR(e->eff_rules);
        for (size_t i = 0; i < e->nrules; i++) {
            e->neff_rules = i + 1;
            PV_GUARD(model_l7rule_copy(&e->eff_rules[i], &e->rules[i]));
        }
        return PV_RESULT_OK;
    }
    e->eff_rules = pv_calloc(n, sizeof(*e->eff_rules));
    PV_GUARD_PTR(e->eff_rules);
    for (size_t i = 0; i < n; i++) {
        e->neff_rules = i + 1;
        PV_GUARD(preset_rule(&e->eff_rules[i], is_optype ? NULL : list[i],
                             is_optype ? list[i] : NULL, e->access.mark));
    }
    return PV_RESULT_OK;
}

static void endpoint_uncompile(struct model_endpoint *e)
{
    model_glob_free(e->host_glob);
    e->host_glob = NULL;
    e->host_is_ip = false;
    memset(&e->host_ip, 0, sizeof(e->host_ip));
    model_glob_free(e->path_glob);
    e->path_glob = NULL;
    PV_SAFE_FREE(e->fp);
    e->fplen = 0;
    e->fphash = 0;
    for (size_t i = 0; i < e->nrules; i++) {
        l7rule_uncompile(&e->rules[i]);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        l7rule_uncompile(&e->deny_rules[i]);
    }
    if (e->eff_rules != NULL) {
        for (size_t i = 0; i < e->neff_rules; i++) {
            l7rule_uncompile(&e->eff_rules[i]);
            model_l7rule_clear(&e->eff_rules[i]);
        }
        PV_SAFE_FREE(e->eff_rules);
    }
    e->neff_rules = 0;
    e->rpc_tool_narrowed = false;
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        PV_SAFE_FREE(e->gql_persisted[i].op.fields);
        memset(&e->gql_persisted[i].op, 0, sizeof(e->gql_persisted[i].op));
        e->gql_persisted[i].op_ok = false;
    }
}

/* Parse an IP-literal host pattern (optionally in brackets). */
static bool host_literal_ip(const char *s, struct model_ip *ip)
{
    size_t len = strlen(s);

    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        return model_ip_parse_strict(s + 1, len - 2, ip);
    }
    return model_ip_parse_strict(s, len, ip);
}

static pv_result endpoint_compile(struct model_endpoint *e)
{
    if (e->host.s != NULL && e->host.s[0] != '\0') {
        if (host_literal_ip(e->host.s, &e->host_ip)) {
            e->host_is_ip = true;
        } else {
            PV_GUARD(compile_glob(MODEL_GLOB_HOST, e->host.s, &e->host_glob));
        }
    }
    if (e->path.s != NULL && e->path.s[0] != '\0') {
        PV_GUARD(compile_glob(MODEL_GLOB_PATH, e->path.s, &e->path_glob));
    }
    for (size_t i = 0; i < e->nrules; i++) {
        PV_GUARD(l7rule_compile(&e->rules[i], e->proto));
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        PV_GUARD(l7rule_compile(&e->deny_rules[i], e->proto));
    }
    PV_GUARD(endpoint_eff_rules(e));
    PV_GUARD(persisted_compile(e));
    e->rpc_tool_narrowed = false;
    for (size_t i = 0; i < e->neff_rules; i++) {
        PV_GUARD(l7rule_compile(&e->eff_rules[i], e->proto));
        e->rpc_tool_narrowed = e->rpc_tool_narrowed || e->eff_rules[i].ntools > 0;
    }
    /* Ports must be sorted for the binary search of port_in(). */
    for (size_t i = 1; i < e->nports; i++) {
        PV_ENSURE(e->ports[i - 1] < e->ports[i], PV_ERR_POLICY);
    }
    /* The fingerprint is read by every proof that meets this policy: once. */
    e->fp = model_endpoint_fingerprint(e, &e->fplen);
    PV_GUARD_PTR(e->fp);
    e->fphash = pv_hash64(e->fp, e->fplen, MODEL_FP_HASH_SEED);
    return PV_RESULT_OK;
}

static void policy_uncompile(struct model_policy *p)
{
    model_index_free(p->index);
    p->index = NULL;
    p->compiled = false;
    for (size_t r = 0; r < p->nrules; r++) {
        struct model_rule *rule = &p->rules[r];
        for (size_t b = 0; b < rule->nbinaries; b++) {
            model_glob_free(rule->binaries[b].glob);
            rule->binaries[b].glob = NULL;
        }
        for (size_t i = 0; i < rule->nendpoints; i++) {
            endpoint_uncompile(&rule->endpoints[i]);
        }
        PV_SAFE_FREE(rule->fp);
        rule->fplen = 0;
        rule->fphash = 0;
    }
}

/* Length-prefixed fields, so that no two policies share a digest input. */
static pv_result digest_field(struct pv_dynbuf *b, char tag, const char *s, size_t len) PV_WUR;
static pv_result digest_field(struct pv_dynbuf *b, char tag, const char *s, size_t len)
{
    /* "%c%zu:" without printf: compiling a 10,000-rule policy calls this
     * for every endpoint and binary twice (digest and rule fingerprints) */
    char t[24];
    size_t n = sizeof(t);
    size_t v = len;

    t[--n] = ':';
    do {
        t[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    t[--n] = tag;
    PV_GUARD(pv_dynbuf_add(b, t + n, sizeof(t) - n));
    return pv_dynbuf_add(b, s, len);
}

static pv_result network_digest(struct model_policy *p) PV_WUR;
static pv_result network_digest(struct model_policy *p)
{
    struct pv_dynbuf b;
    pv_result r = PV_RESULT_OK;

    pv_dynbuf_init(&b, (size_t)1 << 31);
    for (size_t i = 0; i < p->nrules && pv_ok(r); i++) {
        const struct model_rule *rule = &p->rules[i];
        const char *k = rule->key != NULL ? rule->key : "";

        if (rule->nbinaries == 0) {
            continue; /* docs/semantics.md#binaries-empty: no authority */
        }
        r = digest_field(&b, 'R', k, strlen(k));
        for (size_t e = 0; e < rule->nendpoints && pv_ok(r); e++) {
            r = digest_field(&b, 'E', rule->endpoints[e].fp, rule->endpoints[e].fplen);
        }
        for (size_t j = 0; j < rule->nbinaries && pv_ok(r); j++) {
            const char *bp = rule->binaries[j].path.s != NULL ? rule->binaries[j].path.s : "";

            r = digest_field(&b, 'B', bp, strlen(bp));
        }
    }
    if (pv_ok(r)) {
        r = model_sha256_hex(b.buf != NULL ? b.buf : "", b.len, p->net_sha);
    }
    pv_dynbuf_free(&b);
    return r;
}

const char *model_policy_network_digest(const struct model_policy *p)
{
    return p != NULL && p->compiled ? p->net_sha : "";
}

/* The rule's fingerprint (model_rule_fp), after its endpoints' and binaries'. */
static pv_result rule_fingerprint(struct model_rule *rule) PV_WUR;
static pv_result rule_fingerprint(struct model_rule *rule)
{
    struct pv_dynbuf b;
    pv_result r = PV_RESULT_OK;

    pv_dynbuf_init(&b, (size_t)1 << 31);
    for (size_t e = 0; e < rule->nendpoints && pv_ok(r); e++) {
        r = digest_field(&b, 'E', rule->endpoints[e].fp, rule->endpoints[e].fplen);
    }
    for (size_t j = 0; j < rule->nbinaries && pv_ok(r); j++) {
        const char *bp = rule->binaries[j].path.s;

        /* a missing path ('N') is not an empty one */
        r = digest_field(&b, bp != NULL ? 'B' : 'N', bp != NULL ? bp : "",
                         bp != NULL ? strlen(bp) : 0);
    }
    if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return r;
    }
    rule->fp = pv_dynbuf_take(&b, &rule->fplen);
    PV_ENSURE(rule->fp != NULL, PV_ERR_NOMEM);
    rule->fphash = pv_hash64(rule->fp, rule->fplen, MODEL_FP_HASH_SEED);
    return PV_RESULT_OK;
}

static pv_result policy_compile_parts(struct model_policy *p)
{
    for (size_t r = 0; r < p->nrules; r++) {
        struct model_rule *rule = &p->rules[r];
        for (size_t b = 0; b < rule->nbinaries; b++) {
            if (rule->binaries[b].path.s != NULL) {
                PV_GUARD(compile_glob(MODEL_GLOB_BINARY, rule->binaries[b].path.s,
                                      &rule->binaries[b].glob));
            }
        }
        for (size_t i = 0; i < rule->nendpoints; i++) {
            PV_GUARD(endpoint_compile(&rule->endpoints[i]));
        }
        PV_GUARD(rule_fingerprint(rule));
    }
    PV_GUARD(model_index_build(p));
    PV_GUARD(network_digest(p));
    return PV_RESULT_OK;
}

pv_result model_policy_compile(struct model_policy *p)
{
    pv_result r;

    PV_ENSURE_REF(p);
    policy_uncompile(p);
    r = policy_compile_parts(p);
    if (!pv_ok(r)) {
        policy_uncompile(p);
        return r;
    }
    p->compiled = true;
    return PV_RESULT_OK;
}
