/* SPDX-License-Identifier: Apache-2.0 */
/* model_validate_rpc.c - the validator's checks of json-rpc and mcp rules
 *
 * One pass, at load, for every reader of a policy (proxy, prover, advisor,
 * CLI): the reference runs these checks only when its supervisor loads a
 * policy, so its gateway could approve what its sandbox then refuses.
 * Messages are the reference's where it has one, located at the rule
 * (docs/semantics.md#rpc-validation). The tool-filter conflict check uses
 * proviso's one glob engine, the one the evaluator matches with.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "model/model_rpc.h"
#include "model/model_validate.h"

static bool has_glob_meta(const char *s)
{
    return s != NULL && strpbrk(s, "*?[]{}\\") != NULL;
}

static bool reserved_ok(const char *m)
{
    return strcmp(m, MODEL_RPC_M_RESPONSE) == 0 || strcmp(m, MODEL_RPC_M_STREAM) == 0 ||
           strcmp(m, MODEL_RPC_M_END) == 0;
}

/* Does method pattern 'm' (an mcp glob, or json-rpc "*") match tools/call? */
static bool matches_tools_call(const char *m, bool mcp)
{
    struct model_glob *g;
    const char *why = NULL;
    bool hit;

    if (!mcp) {
        return strcmp(m, "*") == 0 || strcmp(m, "tools/call") == 0;
    }
    g = model_glob_compile(MODEL_GLOB_VALUE, m, strlen(m), &why);
    if (g == NULL) {
        return false; /* reported as an invalid pattern */
    }
    hit = model_glob_match(g, "tools/call", 10);
    model_glob_free(g);
    return hit;
}

/* A params.name matcher: a string, {glob: s} or {any: [s, ...]} (the
 * reference's matcher shape messages). */
static void check_name_matcher(struct vctx *c, const struct model_l7rule *r, const char *where,
                               const json_t *v)
{
    const json_t *glob;
    const json_t *any;
    const char *k;
    json_t *x;
    size_t i;

    if (json_is_string(v)) {
        return;
    }
    if (!json_is_object(v)) {
        model_vd_report_l7(c, r->mark, "%s.params.name: expected string glob or matcher object",
                           where);
        return;
    }
    json_object_foreach((json_t *)(uintptr_t)v, k, x)
    {
        if (strcmp(k, "glob") != 0 && strcmp(k, "any") != 0) {
            model_vd_report_l7(c, r->mark,
                               "%s.params.name: unknown matcher keys; only `glob` or `any` are "
                               "supported",
                               where);
            return;
        }
    }
    glob = json_object_get(v, "glob");
    any = json_object_get(v, "any");
    if (glob != NULL && any != NULL) {
        model_vd_report_l7(c, r->mark,
                           "%s.params.name: matcher cannot specify both `glob` and `any`", where);
    } else if (glob != NULL && !json_is_string(glob)) {
        model_vd_report_l7(c, r->mark, "%s.params.name.glob: expected glob string", where);
    } else if (any != NULL && (!json_is_array(any) || json_array_size(any) == 0)) {
        model_vd_report_l7(c, r->mark, "%s.params.name.any: list must not be empty", where);
    } else if (any != NULL) {
        json_array_foreach(any, i, x)
        {
            if (!json_is_string(x)) {
                model_vd_report_l7(c, r->mark, "%s.params.name.any: all values must be strings",
                                   where);
                return;
            }
        }
    } else if (glob == NULL) {
        model_vd_report_l7(c, r->mark, "%s.params.name: expected string glob or matcher object",
                           where);
    }
}

/* params: a map whose only key is name. */
static void check_params(struct vctx *c, const struct model_l7rule *r, const char *where)
{
    const char *k;
    json_t *x;

    if (!json_is_object(r->params)) {
        model_vd_report_l7(c, r->mark, "%s.params: expected map of matchers", where);
        return;
    }
    json_object_foreach(r->params, k, x)
    {
        if (strcmp(k, "name") != 0) {
            model_vd_report_l7(c, r->mark,
                               "%s.params.%s: MCP tool argument matching is not supported yet",
                               where, k);
        }
    }
    if (json_object_get(r->params, "name") != NULL) {
        check_name_matcher(c, r, where, json_object_get(r->params, "name"));
    }
}

/* The tool patterns of an mcp rule: non-empty valid globs, wildcards only
 * under strict_tool_names. */
static void check_tools(struct vctx *c, const struct model_endpoint *e,
                        const struct model_l7rule *r, const char *where)
{
    const char *field = r->tool.s != NULL ? "tool" : "params.name";
    struct model_mark m = r->tool.s != NULL ? mark_or(r->tool.mark, r->mark) : r->mark;
    char word[160];

    for (size_t i = 0; i < model_l7rule_ntools(r); i++) {
        const char *t = model_l7rule_tool_at(r, i);
        if (str_empty(t)) {
            model_vd_report_l7(c, m, "%s.%s: a tool pattern must not be empty", where, field);
            continue;
        }
        (void)snprintf(word, sizeof(word), "MCP %s", field);
        model_vd_check_glob_as(c, MODEL_GLOB_VALUE, word, t, m);
        if (has_glob_meta(t) && !model_endpoint_rpc_strict_tools(e)) {
            model_vd_report_l7(c, m,
                               "%s.%s: wildcard tool-name matchers require "
                               "mcp.strict_tool_names to remain enabled",
                               where, field);
        }
    }
}

/* Fields no call rule has: path and query (HTTP), GraphQL and SQL. */
static void check_foreign(struct vctx *c, const struct model_endpoint *e,
                          const struct model_l7rule *r, const char *where, bool mcp)
{
    if (!str_empty(r->path.s) || r->nquery > 0) {
        model_vd_report_l7(c, mark_or(r->path.mark, r->mark),
                           "%s: %s L7 rules must use %s, not path/query", where,
                           mcp ? "mcp" : "json-rpc", mcp ? "method/tool" : "method");
    }
    if (r->operation_type.s != NULL || r->operation_name.s != NULL || r->fields.n > 0 ||
        r->command.s != NULL) {
        model_vd_report_l7(c, mark_or(r->operation_type.mark, r->mark),
                           "%s: operation_type, operation_name, fields and command are not call "
                           "rule fields; protocol %s matches method%s",
                           where, str_or_empty(e->protocol.s), mcp ? " and tool" : "");
    }
}

/*= docs/semantics.md#rpc-validation
 *# on `json-rpc`: a rule without `method`, a method that is neither `*` nor
 *# an exact name (no glob), a `tool` or `params` */
static void check_jsonrpc_rule(struct vctx *c, const struct model_l7rule *r, const char *where)
{
    struct model_mark mm = mark_or(r->method.mark, r->mark);

    if (str_empty(r->method.s)) {
        model_vd_report_l7(c, mm, "%s.method: required for json-rpc L7 rules", where);
    } else if (strcmp(r->method.s, "*") != 0 && has_glob_meta(r->method.s)) {
        model_vd_report_l7(c, mm,
                           "%s.method: generic JSON-RPC method rules do not support glob or "
                           "wildcard matchers; use \"*\" to allow all methods or an exact method "
                           "name",
                           where);
    } else if (strncmp(r->method.s, "rpc.", 4) == 0) {
        model_vd_report_l7(c, mm,
                           "%s.method: names beginning 'rpc.' are reserved by JSON-RPC 2.0 and "
                           "json-rpc endpoints carry none of proviso's rpc.* calls",
                           where);
    }
    if (r->params != NULL) {
        model_vd_report_l7(c, r->mark, "%s: JSON-RPC rules do not support params matchers yet",
                           where);
    }
    if (r->tool.s != NULL) {
        model_vd_report_l7(c, mark_or(r->tool.mark, r->mark),
                           "%s.tool: MCP tool matching is only valid for protocol mcp", where);
    }
}

/*= docs/semantics.md#rpc-validation
 *# on `mcp`: a method glob outside the `tools/` family (`*` included) */
static void check_mcp_rule(struct vctx *c, const struct model_endpoint *e,
                           const struct model_l7rule *r, const char *where, bool deny)
{
    struct model_mark mm = mark_or(r->method.mark, r->mark);
    const json_t *pname =
        r->params != NULL && json_is_object(r->params) ? json_object_get(r->params, "name") : NULL;
    bool has_tool = r->tool.s != NULL || pname != NULL;

    if (r->params != NULL) {
        check_params(c, r, where);
    }
    if (r->tool.s != NULL && pname != NULL) {
        model_vd_report_l7(c, r->mark,
                           "%s: MCP rules must use either tool or params.name, not both", where);
    }
    if (!str_empty(r->method.s)) {
        const char *m = r->method.s;
        if (has_glob_meta(m) && strncmp(m, "tools/", 6) != 0) {
            model_vd_report_l7(c, mm,
                               "%s.method: MCP method globs are only valid for the tools/ method "
                               "family; omit method to use the endpoint method profile",
                               where);
        } else if (has_glob_meta(m)) {
            model_vd_check_glob_as(c, MODEL_GLOB_VALUE, "MCP method", m, mm);
        } else if (strncmp(m, "rpc.", 4) == 0 && !reserved_ok(m)) {
            model_vd_report_l7(c, mm,
                               "%s.method: names beginning 'rpc.' are reserved by JSON-RPC 2.0; "
                               "proviso's calls are rpc.response, rpc.stream and rpc.end",
                               where);
        }
        if (has_tool && strcmp(m, "tools/call") != 0) {
            model_vd_report_l7(c, mm,
                               "%s.method: must be tools/call when an MCP rule uses tool or "
                               "params.name, got '%s'",
                               where, m);
        }
    } else if (!deny && !has_tool && !e->mcp_allow_all_known_methods) {
        model_vd_report_l7(
            c, mm, "%s.method: required when mcp.allow_all_known_mcp_methods is false", where);
    }
    if (has_tool) {
        check_tools(c, e, r, where);
    }
}

/*= docs/semantics.md#rpc-validation
 *# when some allow rule has a tool selector, an allow or deny rule without
 *# one whose method matches `tools/call` */
static void check_tool_conflicts(struct vctx *c, const struct model_endpoint *e)
{
    bool mcp = e->proto == MODEL_PROTO_MCP;
    bool narrowed = false;
    char where[64];

    for (size_t i = 0; i < e->nrules; i++) {
        narrowed = narrowed || model_l7rule_ntools(&e->rules[i]) > 0 ||
                   (e->rules[i].params != NULL && json_is_object(e->rules[i].params) &&
                    json_object_get(e->rules[i].params, "name") != NULL);
    }
    if (!mcp || !narrowed) {
        return;
    }
    for (size_t i = 0; i < e->nrules; i++) {
        const struct model_l7rule *r = &e->rules[i];
        bool every = str_empty(r->method.s) ? e->mcp_allow_all_known_methods
                                            : matches_tools_call(r->method.s, mcp);
        if (model_l7rule_ntools(r) == 0 && every) {
            (void)snprintf(where, sizeof(where), "rules[%zu].allow", i);
            model_vd_report_l7(c, mark_or(r->method.mark, r->mark),
                               "%s: method matcher allows every tool call and conflicts with MCP "
                               "tool allow rules; add tool or params.name to narrow tools/call, "
                               "or remove the tool allow rules",
                               where);
        }
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        const struct model_l7rule *r = &e->deny_rules[i];
        bool every = str_empty(r->method.s) || matches_tools_call(r->method.s, mcp);
        if (model_l7rule_ntools(r) == 0 && every) {
            (void)snprintf(where, sizeof(where), "deny_rules[%zu]", i);
            model_vd_report_l7(c, mark_or(r->method.mark, r->mark),
                               "%s: method matcher denies every tool call and conflicts with MCP "
                               "tool allow rules; add tool or params.name to deny specific tools, "
                               "or remove the tool allow rules",
                               where);
        }
    }
}

void model_vd_check_rpc(struct vctx *c, const struct model_endpoint *e)
{
    bool mcp = e->proto == MODEL_PROTO_MCP;
    uint32_t limit = mcp ? e->mcp_max_body_bytes : e->json_rpc_max_body_bytes;
    char where[64];

    if (e->proto != MODEL_PROTO_JSONRPC && !mcp) {
        return;
    }
    /*= docs/semantics.md#rpc-validation
     *# a `max_body_bytes` over 16 MiB */
    if (limit > MODEL_RPC_MAX_BODY_CEILING) {
        model_vd_report_l7(c, e->mark, "%s.max_body_bytes must be at most %u (16 MiB), got %u",
                           mcp ? "mcp" : "json_rpc", MODEL_RPC_MAX_BODY_CEILING, limit);
    }
    for (size_t i = 0; i < e->nrules + e->ndeny; i++) {
        bool deny = i >= e->nrules;
        const struct model_l7rule *r = deny ? &e->deny_rules[i - e->nrules] : &e->rules[i];
        if (deny) {
            (void)snprintf(where, sizeof(where), "deny_rules[%zu]", i - e->nrules);
        } else {
            (void)snprintf(where, sizeof(where), "rules[%zu].allow", i);
        }
        check_foreign(c, e, r, where, mcp);
        if (mcp) {
            check_mcp_rule(c, e, r, where, deny);
        } else {
            check_jsonrpc_rule(c, r, where);
        }
    }
    check_tool_conflicts(c, e);
}
