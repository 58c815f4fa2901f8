/* SPDX-License-Identifier: Apache-2.0 */
/* model_eval_detail.c - names of reasons and routes, endpoint accessors, a decision's detail
 *
 * The text half of the evaluator: the stable names of reasons and routes,
 * small accessors the proxy and prover read endpoints with, and the
 * human-readable detail of a decision (which rule, which clause, what the
 * request carried, untrusted bytes made printable). Plain copies rather
 * than printf: denials are formatted on the hot path.
 */
#include "config.h"

#include <string.h>

#include "common/pv_text.h"
#include "model/model_graphql.h"
#include "model/model_eval.h"
#include "model/model_rpc.h"

/* ===========================================================================
 * Decision: details and the entry point
 * ========================================================================= */

static const char *const reason_names[] = {
    [MODEL_REASON_ALLOWED] = "allowed",
    [MODEL_REASON_AUDIT] = "audit",
    [MODEL_REASON_NO_POLICY] = "no_policy",
    [MODEL_REASON_NO_ENDPOINT] = "no_endpoint",
    [MODEL_REASON_BINARY] = "binary_not_allowed",
    [MODEL_REASON_BAD_HOST] = "bad_host",
    [MODEL_REASON_BAD_TARGET] = "bad_target",
    [MODEL_REASON_ENCODED_SLASH] = "encoded_slash",
    [MODEL_REASON_NO_L7_PATH] = "no_l7_path",
    [MODEL_REASON_L7_NOT_PERMITTED] = "l7_not_permitted",
    [MODEL_REASON_L7_DENY_RULE] = "l7_deny_rule",
    [MODEL_REASON_L7_UNSUPPORTED] = "l7_unsupported",
    [MODEL_REASON_BAD_QUERY] = "bad_query",
    [MODEL_REASON_DEST_BLOCKED] = "dest_blocked",
    [MODEL_REASON_DEST_PORT] = "dest_control_plane_port",
    [MODEL_REASON_DEST_INTERNAL] = "dest_internal",
    [MODEL_REASON_DEST_ALLOWED_IPS] = "dest_not_in_allowed_ips",
    [MODEL_REASON_DEST_UNRESOLVED] = "dest_unresolved",
    [MODEL_REASON_GQL_NO_OPERATION] = "graphql_no_operation",
    [MODEL_REASON_GQL_BAD_METHOD] = "graphql_bad_method",
    [MODEL_REASON_GQL_BAD_OPERATION] = "graphql_bad_operation",
    [MODEL_REASON_GQL_PERSISTED_DENIED] = "graphql_persisted_denied",
    [MODEL_REASON_GQL_PERSISTED_UNKNOWN] = "graphql_persisted_unknown",
    [MODEL_REASON_RPC_NO_CALL] = "rpc_no_call",
    [MODEL_REASON_RPC_BAD_METHOD] = "rpc_bad_method",
};

const char *model_reason_name(enum model_reason r)
{
    if ((size_t)r < PV_ARRAY_LEN(reason_names) && reason_names[r] != NULL) {
        return reason_names[r];
    }
    return "unknown";
}

const char *model_route_name(enum model_route r)
{
    switch (r) {
    case MODEL_ROUTE_NONE:
        return "none";
    case MODEL_ROUTE_OPAQUE:
        return "opaque";
    case MODEL_ROUTE_INSPECTED:
        return "inspected";
    }
    return "unknown";
}

/* RFC 7230 token characters. */
static bool is_tchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
        return true;
    }
    return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

bool model_method_valid(const char *m, size_t len)
{
    if (m == NULL || len == 0 || len > EVAL_METHOD_MAX) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_tchar((unsigned char)m[i])) {
            return false;
        }
    }
    return true;
}

const char *model_endpoint_host(const struct model_endpoint *e)
{
    return e != NULL && e->host.s != NULL ? e->host.s : "";
}

bool model_endpoint_body_cred_rewrite(const struct model_endpoint *e)
{
    return e != NULL && e->request_body_credential_rewrite;
}

bool model_endpoint_ws_cred_rewrite(const struct model_endpoint *e)
{
    return e != NULL && e->websocket_credential_rewrite;
}

size_t model_endpoint_nports(const struct model_endpoint *e)
{
    return e != NULL ? e->nports : 0;
}

uint16_t model_endpoint_port(const struct model_endpoint *e, size_t i)
{
    return e != NULL && i < e->nports ? e->ports[i] : 0;
}

/* Append 'str' to the detail (truncating; always NUL-terminated). Plain
 * copies rather than vsnprintf: denials are formatted on the hot path. */
void model_ev_dcat(struct model_decision *out, size_t *len, const char *str)
{
    size_t n = strlen(str);
    size_t room = sizeof(out->detail) - 1 - *len;

    if (n > room) {
        n = room;
    }
    memcpy(out->detail + *len, str, n);
    *len += n;
    out->detail[*len] = '\0';
}

static void dnum(struct model_decision *out, size_t *len, unsigned v)
{
    char buf[12];
    size_t i = sizeof(buf) - 1;

    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && i > 0);
    model_ev_dcat(out, len, buf + i);
}

/* Printable copy of untrusted text (bytes outside 0x20..0x7E become '?'). */
const char *model_ev_sanitize(const char *s, size_t len, char *buf, size_t cap)
{
    size_t n = len < cap - 1 ? len : cap - 1;

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[i] = (ch >= 0x20 && ch < 0x7F) ? (char)ch : '?';
    }
    buf[n] = '\0';
    return buf;
}

static const char *proto_name(const struct model_endpoint *e)
{
    switch (e->proto) {
    case MODEL_PROTO_NONE:
        return "none";
    case MODEL_PROTO_TCP:
        return "tcp";
    case MODEL_PROTO_REST:
        return "rest";
    case MODEL_PROTO_WEBSOCKET:
        return "websocket";
    case MODEL_PROTO_GRAPHQL:
        return "graphql";
    case MODEL_PROTO_SQL:
        return "sql";
    case MODEL_PROTO_JSONRPC:
        return "json-rpc";
    case MODEL_PROTO_MCP:
        return "mcp";
    }
    return "unknown";
}

static const char *target_why(enum model_target_status s)
{
    switch (s) {
    case MODEL_TARGET_OK:
    case MODEL_TARGET_BAD:
        return "malformed request target";
    case MODEL_TARGET_TRAVERSAL:
        return "path traversal above the root";
    case MODEL_TARGET_ENCODED_SLASH:
        return "encoded slash";
    case MODEL_TARGET_TOO_LONG:
        return "path too long";
    }
    return "malformed request target";
}

/* "GraphQL mutation CreateIssue {createIssue,viewer}" or "GraphQL persisted
 * query 'ID'": the request's operation, sanitized. */
static void gql_desc(const struct eval_ctx *c, struct model_decision *out, size_t *len)
{
    const struct model_gql_op *op = c->req->gql;
    char buf[96];

    if (op == NULL) {
        model_ev_dcat(out, len, c->method);
        model_ev_dcat(out, len, " ");
        model_ev_dcat(out, len, c->path);
        return;
    }
    if (op->persisted_id != NULL) {
        model_ev_dcat(out, len, "GraphQL persisted query '");
        model_ev_dcat(
            out, len,
            model_ev_sanitize(op->persisted_id, strlen(op->persisted_id), buf, sizeof(buf)));
        model_ev_dcat(out, len, "'");
        return;
    }
    model_ev_dcat(out, len, "GraphQL ");
    model_ev_dcat(out, len, model_gql_optype_name(op->type));
    model_ev_dcat(out, len, " ");
    model_ev_dcat(out, len,
                  op->name != NULL ? model_ev_sanitize(op->name, strlen(op->name), buf, sizeof(buf))
                                   : "(anonymous)");
    model_ev_dcat(out, len, " {");
    for (size_t i = 0; i < op->nfields && op->fields != NULL; i++) {
        const char *f = op->fields[i] != NULL ? op->fields[i] : "";
        model_ev_dcat(out, len, i > 0 ? "," : "");
        model_ev_dcat(out, len, model_ev_sanitize(f, strlen(f), buf, sizeof(buf)));
    }
    model_ev_dcat(out, len, "}");
}

/* "JSON-RPC request M" / "MCP notification M tool T" (names sanitized). */
static void rpc_desc(const struct eval_ctx *c, const struct ix_ep *x, struct model_decision *out,
                     size_t *len)
{
    const struct model_rpc_call *k = c->req->rpc;
    char buf[160];

    model_ev_dcat(out, len, x != NULL && x->ep->proto == MODEL_PROTO_MCP ? "MCP " : "JSON-RPC ");
    model_ev_dcat(out, len, model_rpc_kind_name(k->kind));
    model_ev_dcat(out, len, " ");
    (void)model_rpc_name_escape(k->method, buf, sizeof(buf));
    model_ev_dcat(out, len, buf);
    if (k->tool != NULL) {
        model_ev_dcat(out, len, " tool ");
        (void)model_rpc_name_escape(k->tool, buf, sizeof(buf));
        model_ev_dcat(out, len, buf);
    }
}

static bool rpc_unit(const struct eval_ctx *c, const struct ix_ep *x)
{
    return x != NULL && c->req->rpc != NULL &&
           (x->ep->proto == MODEL_PROTO_JSONRPC || x->ep->proto == MODEL_PROTO_MCP);
}

static bool gql_unit(const struct eval_ctx *c, const struct ix_ep *x)
{
    return x != NULL && (x->ep->proto == MODEL_PROTO_GRAPHQL ||
                         (x->ep->proto == MODEL_PROTO_WEBSOCKET && c->req->gql != NULL));
}

/* long: one case per model_reason, each a few dcat() calls writing its message; one switch over
 * our enum lets -Wswitch find a new reason */
void model_ev_format_detail(const struct eval_ctx *c, const struct verdict *v,
                            struct model_decision *out)
{
    const struct ix_ep *x = v->unit != EVAL_NONE ? &c->ix->eps[v->unit] : NULL;
    const char *name = x != NULL ? model_rule_display_name(x->rule) : "";
    char ipbuf[64];
    char exe[160];
    size_t len = 0;

    out->detail[0] = '\0';
    switch (v->reason) {
    case MODEL_REASON_ALLOWED:
        return;
    case MODEL_REASON_AUDIT:
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len, " ");
        model_ev_dcat(out, &len, c->path);
        model_ev_dcat(out, &len, " allowed in audit mode by policy '");
        model_ev_dcat(out, &len, name);
        model_ev_dcat(out, &len, "'");
        return;
    case MODEL_REASON_NO_POLICY:
        model_ev_dcat(out, &len, "network connections not allowed by policy");
        return;
    case MODEL_REASON_NO_ENDPOINT:
        /* An IPv6 host is bracketed so that host:port stays readable. */
        model_ev_dcat(out, &len,
                      c->host_is_ip && memchr(c->host, ':', c->host_len) != NULL ? "endpoint ["
                                                                                 : "endpoint ");
        model_ev_dcat(out, &len, c->host);
        model_ev_dcat(out, &len,
                      c->host_is_ip && memchr(c->host, ':', c->host_len) != NULL ? "]:" : ":");
        dnum(out, &len, c->req->port);
        model_ev_dcat(out, &len, " is not allowed by any policy");
        return;
    case MODEL_REASON_BINARY: {
        /* One clause per rule with a matching endpoint, joined by "; ". */
        uint32_t last = EVAL_NONE;
        model_ev_sanitize(c->nid > 0 ? c->req->binaries[0] : "", c->nid > 0 ? c->idlen[0] : 0, exe,
                          sizeof(exe));
        for (size_t i = 0; i < c->ncands; i++) {
            const struct ix_ep *cx = &c->ix->eps[c->cands[i]];
            if (cx->rule_idx == last) {
                continue;
            }
            last = cx->rule_idx;
            model_ev_dcat(out, &len, len > 0 ? "; binary '" : "binary '");
            model_ev_dcat(out, &len, exe);
            model_ev_dcat(out, &len, "' not allowed in policy '");
            model_ev_dcat(out, &len, model_rule_display_name(cx->rule));
            model_ev_dcat(out, &len, "'");
        }
        if (len == 0 && x != NULL) {
            model_ev_dcat(out, &len, "binary '");
            model_ev_dcat(out, &len, exe);
            model_ev_dcat(out, &len, "' not allowed in policy '");
            model_ev_dcat(out, &len, name);
            model_ev_dcat(out, &len, "'");
        }
        return;
    }
    case MODEL_REASON_BAD_HOST:
        model_ev_dcat(out, &len, "invalid host '");
        if (c->req->host != NULL) {
            model_ev_dcat(out, &len,
                          model_ev_sanitize(c->req->host, c->req->host_len, exe, sizeof(exe)));
        }
        model_ev_dcat(out, &len, "'");
        return;
    case MODEL_REASON_BAD_TARGET:
        if (c->prep == PREP_BAD_METHOD || c->prep == PREP_TODO) {
            model_ev_dcat(out, &len, "invalid HTTP method");
        } else {
            model_ev_dcat(out, &len, "request target rejected: ");
            model_ev_dcat(out, &len, target_why(c->target_status));
        }
        return;
    case MODEL_REASON_ENCODED_SLASH:
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len, " ");
        model_ev_dcat(out, &len, c->path);
        model_ev_dcat(out, &len,
                      " contains an encoded slash (%2F); set allow_encoded_slash: true on "
                      "this endpoint to permit it");
        return;
    case MODEL_REASON_NO_L7_PATH:
    case MODEL_REASON_L7_NOT_PERMITTED:
        if (v->reason == MODEL_REASON_L7_NOT_PERMITTED && rpc_unit(c, x)) {
            rpc_desc(c, x, out, &len);
        } else if (v->reason == MODEL_REASON_L7_NOT_PERMITTED && gql_unit(c, x)) {
            gql_desc(c, out, &len);
        } else {
            model_ev_dcat(out, &len, c->method);
            model_ev_dcat(out, &len, " ");
            model_ev_dcat(out, &len, c->path);
        }
        model_ev_dcat(out, &len, " not permitted by policy");
        return;
    case MODEL_REASON_L7_DENY_RULE:
        if (rpc_unit(c, x)) {
            rpc_desc(c, x, out, &len);
        } else if (gql_unit(c, x) && c->req->gql != NULL) {
            gql_desc(c, out, &len);
        } else {
            model_ev_dcat(out, &len, c->method);
            model_ev_dcat(out, &len, " ");
            model_ev_dcat(out, &len, c->path);
        }
        model_ev_dcat(out, &len, " blocked by deny rule");
        return;
    case MODEL_REASON_GQL_NO_OPERATION:
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len, " ");
        model_ev_dcat(out, &len, c->path);
        model_ev_dcat(out, &len, " is not a GraphQL operation; graphql endpoint of policy '");
        model_ev_dcat(out, &len, name);
        model_ev_dcat(out, &len, "' denies it");
        return;
    case MODEL_REASON_GQL_BAD_METHOD:
        gql_desc(c, out, &len);
        model_ev_dcat(out, &len, " sent with ");
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len, ": GraphQL over HTTP allows POST, and GET for queries only");
        return;
    case MODEL_REASON_RPC_NO_CALL:
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len, " ");
        model_ev_dcat(out, &len, c->path);
        model_ev_dcat(out, &len, " carries no JSON-RPC call that was read; ");
        model_ev_dcat(out, &len, x != NULL ? proto_name(x->ep) : "json-rpc");
        model_ev_dcat(out, &len, " endpoint of policy '");
        model_ev_dcat(out, &len, name);
        model_ev_dcat(out, &len, "' denies it");
        return;
    case MODEL_REASON_RPC_BAD_METHOD:
        if (c->req->rpc != NULL) {
            rpc_desc(c, x, out, &len);
            model_ev_dcat(out, &len, " sent with ");
        }
        model_ev_dcat(out, &len, c->method);
        model_ev_dcat(out, &len,
                      ": JSON-RPC calls travel in POST; on mcp, rpc.stream in GET and rpc.end in "
                      "DELETE");
        return;
    case MODEL_REASON_GQL_BAD_OPERATION:
        model_ev_dcat(out, &len, "GraphQL operation with an invalid name or root field, or none");
        return;
    case MODEL_REASON_GQL_PERSISTED_DENIED:
        gql_desc(c, out, &len);
        model_ev_dcat(out, &len,
                      " denied: hash-only requests need persisted_queries: allow_registered");
        return;
    case MODEL_REASON_GQL_PERSISTED_UNKNOWN:
        gql_desc(c, out, &len);
        model_ev_dcat(out, &len, " is not in graphql_persisted_queries of policy '");
        model_ev_dcat(out, &len, name);
        model_ev_dcat(out, &len, "'");
        return;
    case MODEL_REASON_L7_UNSUPPORTED: {
        const char *pn = x != NULL ? proto_name(x->ep) : "unknown";
        model_ev_dcat(out, &len, "protocol ");
        model_ev_dcat(out, &len, pn);
        model_ev_dcat(out, &len, " is not inspected by proviso-proxy; enforced ");
        model_ev_dcat(out, &len, pn);
        model_ev_dcat(out, &len, " endpoints deny all requests");
        return;
    }
    case MODEL_REASON_BAD_QUERY:
        model_ev_dcat(out, &len, "malformed query string");
        if (c->q_semicolon) {
            model_ev_dcat(out, &len,
                          ": a raw ';' (some servers split parameters on it, others "
                          "do not; send it as %3B)");
        }
        return;
    case MODEL_REASON_DEST_PORT:
        model_ev_dcat(out, &len, "port ");
        dnum(out, &len, c->req->port);
        model_ev_dcat(out, &len, " is a blocked control-plane port, connection rejected");
        return;
    case MODEL_REASON_DEST_UNRESOLVED:
        model_ev_dcat(out, &len, "target_sandbox '");
        model_ev_dcat(out, &len,
                      x != NULL && x->ep->target_sandbox.s != NULL ? x->ep->target_sandbox.s : "");
        model_ev_dcat(out, &len, "' of policy '");
        model_ev_dcat(out, &len, name);
        model_ev_dcat(out, &len, "' is not resolved, connection rejected");
        return;
    case MODEL_REASON_DEST_BLOCKED:
    case MODEL_REASON_DEST_INTERNAL:
    case MODEL_REASON_DEST_ALLOWED_IPS:
        break;
    }
    if (c->dest != NULL) {
        model_ip_format(c->dest, ipbuf, sizeof(ipbuf));
    } else {
        memcpy(ipbuf, "(unresolved)", sizeof("(unresolved)"));
    }
    model_ev_dcat(out, &len, c->host);
    if (v->reason == MODEL_REASON_DEST_BLOCKED) {
        model_ev_dcat(out, &len, " resolves to always-blocked address ");
        model_ev_dcat(out, &len, ipbuf);
    } else if (v->reason == MODEL_REASON_DEST_INTERNAL) {
        model_ev_dcat(out, &len, " resolves to internal address ");
        model_ev_dcat(out, &len, ipbuf);
    } else {
        model_ev_dcat(out, &len, " resolves to ");
        model_ev_dcat(out, &len, ipbuf);
        model_ev_dcat(out, &len, " which is not in allowed_ips");
    }
    model_ev_dcat(out, &len, ", connection rejected");
}

/* Rank of a denial, to report the most informative one among identities. */
