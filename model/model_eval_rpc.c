/* SPDX-License-Identifier: Apache-2.0 */
/* model_eval_rpc.c - the evaluator's JSON-RPC and MCP matching
 *
 * Whether the call rules of one `json-rpc` or `mcp` endpoint grant or deny
 * the call a request carries (docs/semantics.md#rpc-rules onwards): the
 * HTTP method the call's kind needs, the method profile, method and tool
 * globs, deny rules. Also the rule's tool patterns (from `tool` or
 * `params.name`) and the endpoint accessors the proxy reads. Pure, like
 * the rest of the evaluator.
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "model/model_eval.h"
#include "model/model_rpc.h"

/* ---------------------------------------------------------------------------
 * Tool patterns of a rule
 * ------------------------------------------------------------------------- */

/* params.name: a string, {glob: s} or {any: [s, ...]}; NULL otherwise. */
static const json_t *params_name(const struct model_l7rule *r)
{
    return r->params != NULL && json_is_object(r->params) ? json_object_get(r->params, "name")
                                                          : NULL;
}

size_t model_l7rule_ntools(const struct model_l7rule *r)
{
    const json_t *n = params_name(r);
    const json_t *any;

    if (r->tool.s != NULL) {
        return 1;
    }
    if (n == NULL) {
        return 0;
    }
    if (json_is_string(n) || json_is_string(json_object_get(n, "glob"))) {
        return 1;
    }
    any = json_object_get(n, "any");
    return json_is_array(any) ? json_array_size(any) : 0;
}

const char *model_l7rule_tool_at(const struct model_l7rule *r, size_t i)
{
    const json_t *n = params_name(r);
    const json_t *v;

    if (i >= model_l7rule_ntools(r)) {
        return NULL;
    }
    if (r->tool.s != NULL) {
        return r->tool.s;
    }
    if (json_is_string(n)) {
        return json_string_value(n);
    }
    v = json_object_get(n, "glob");
    if (!json_is_string(v)) {
        v = json_array_get(json_object_get(n, "any"), i);
    }
    /* not a string: validated away; an empty pattern matches no tool */
    return json_is_string(v) ? json_string_value(v) : "";
}

/* ---------------------------------------------------------------------------
 * Endpoint accessors
 * ------------------------------------------------------------------------- */

bool model_endpoint_is_rpc(const struct model_endpoint *e, bool *mcp)
{
    bool is = e != NULL && (e->proto == MODEL_PROTO_JSONRPC || e->proto == MODEL_PROTO_MCP);

    if (mcp != NULL) {
        *mcp = is && e->proto == MODEL_PROTO_MCP;
    }
    return is;
}

/*= docs/semantics.md#rpc-read
 *# The body bound is `max_body_bytes` of the endpoint's `mcp` (on `mcp`) or
 *# `json_rpc` (on `json-rpc`) options, 65536 when absent or 0 */
size_t model_endpoint_rpc_max_body(const struct model_endpoint *e)
{
    uint32_t v = 0;

    if (e != NULL) {
        v = e->proto == MODEL_PROTO_MCP ? e->mcp_max_body_bytes : e->json_rpc_max_body_bytes;
    }
    return v > 0 ? v : MODEL_RPC_DEFAULT_MAX_BODY;
}

bool model_endpoint_rpc_strict_tools(const struct model_endpoint *e)
{
    return e != NULL && e->proto == MODEL_PROTO_MCP &&
           (!e->mcp_strict_given || e->mcp_strict_tool_names);
}

/* ---------------------------------------------------------------------------
 * Matching
 * ------------------------------------------------------------------------- */

static bool method_is(const struct eval_ctx *c, const char *m)
{
    size_t n = strlen(m);

    return c->method_len == n && memcmp(c->method, m, n) == 0;
}

/*= docs/semantics.md#rpc
 *# A request, a notification and a response travel in a `POST`; `rpc.stream`
 *# is a `GET` and `rpc.end` a `DELETE` */
static bool kind_fits(const struct eval_ctx *c, const struct model_rpc_call *k, bool mcp)
{
    switch (k->kind) {
    case MODEL_RPC_REQUEST:
    case MODEL_RPC_NOTIFICATION:
        return method_is(c, "POST");
    case MODEL_RPC_RESPONSE:
        return mcp && method_is(c, "POST");
    case MODEL_RPC_STREAM:
        return mcp && method_is(c, "GET");
    case MODEL_RPC_END:
        return mcp && method_is(c, "DELETE");
    }
    return false;
}

static bool tool_match(const struct model_l7rule *r, const struct model_rpc_call *k)
{
    size_t len;

    if (k->tool == NULL || r->tool_globs == NULL) {
        return false;
    }
    len = strlen(k->tool);
    for (size_t i = 0; i < r->ntools; i++) {
        if (r->tool_globs[i] != NULL && model_glob_match(r->tool_globs[i], k->tool, len)) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#rpc-rules
 *# A rule matches a call when its method matches and, if it has a tool
 *# selector, the call's tool matches one of its patterns */
static bool rule_match(const struct model_endpoint *e, const struct model_l7rule *r,
                       const struct model_rpc_call *k, bool deny)
{
    const char *m = r->method.s;
    bool mcp = e->proto == MODEL_PROTO_MCP;
    bool has_tool = model_l7rule_ntools(r) > 0;

    if (m == NULL || m[0] == '\0') {
        /*= docs/semantics.md#rpc-rules
         *# A rule without `method` but with a tool selector means `tools/call`.
         *# A rule with neither: an allow rule on an `mcp` endpoint whose
         *# method profile is on matches every method of the profile, any
         *# other allow rule matches nothing, and a deny rule matches every
         *# call. */
        if (has_tool) {
            m = "tools/call";
        } else if (deny) {
            return true;
        } else {
            return mcp && e->mcp_allow_all_known_methods && model_rpc_mcp_known(k->method) &&
                   !(e->rpc_tool_narrowed && strcmp(k->method, "tools/call") == 0);
        }
    }
    if (!mcp) {
        /*= docs/semantics.md#rpc-rules
         *# On `json-rpc` a method is `*` (every call) or one exact name */
        if (!(m[0] == '*' && m[1] == '\0') && strcmp(m, k->method) != 0) {
            return false;
        }
    } else if (r->rpc_method_glob != NULL) {
        if (!model_glob_match(r->rpc_method_glob, k->method, strlen(k->method))) {
            return false;
        }
    } else if (r->method.s != NULL && r->method.s[0] != '\0') {
        return deny; /* not compiled: fail closed */
    } else if (strcmp(m, k->method) != 0) {
        return false;
    }
    if (!has_tool) {
        return true;
    }
    if (r->tool_globs == NULL) {
        return deny; /* not compiled: fail closed */
    }
    return tool_match(r, k);
}

enum model_reason model_ev_rpc_allow(const struct eval_ctx *c, const struct model_endpoint *e)
{
    const struct model_rpc_call *k = c->req->rpc;
    bool mcp = e->proto == MODEL_PROTO_MCP;

    /*= docs/semantics.md#rpc
     *# A request without a call is not granted (`rpc_no_call`); the proxy
     *# reads its calls and asks again */
    if (k == NULL) {
        return MODEL_REASON_RPC_NO_CALL;
    }
    if (!kind_fits(c, k, mcp)) {
        return MODEL_REASON_RPC_BAD_METHOD;
    }
    /*= docs/semantics.md#rpc-profile
     *# With `allow_all_known_mcp_methods: true` an `mcp` endpoint grants
     *# every call whose method is in the profile, except `tools/call` when
     *# some allow rule of the endpoint has a tool selector */
    if (mcp && e->mcp_allow_all_known_methods && model_rpc_mcp_known(k->method) &&
        !(e->rpc_tool_narrowed && strcmp(k->method, "tools/call") == 0)) {
        return MODEL_REASON_ALLOWED;
    }
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (rule_match(e, &e->eff_rules[i], k, false)) {
            return MODEL_REASON_ALLOWED;
        }
    }
    return MODEL_REASON_L7_NOT_PERMITTED;
}

/*= docs/semantics.md#rpc-deny
 *# A deny rule of a `json-rpc` or `mcp` endpoint matches a call as an
 *# allow rule would; it never matches a request without a call */
bool model_ev_rpc_deny(const struct eval_ctx *c, const struct model_endpoint *e)
{
    const struct model_rpc_call *k = c->req->rpc;

    if (k == NULL) {
        return false;
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        if (rule_match(e, &e->deny_rules[i], k, true)) {
            return true;
        }
    }
    return false;
}
