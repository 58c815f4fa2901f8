/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_rpc.c - what a refused JSON-RPC / MCP request is answered
 *
 * A request on a json-rpc or mcp endpoint that the proxy does not forward
 * is answered in JSON-RPC (docs/semantics.md#rpc-replies), so that an MCP
 * client shows a tool error rather than a transport failure: 200 and one
 * error per request of the body (-32001 for a denied call, -32002 for an
 * allowed call withheld because another call of the batch was denied);
 * 403 and one error with a null id when the body holds no request (only
 * notifications and responses, a receive-stream GET, a DELETE) or could
 * not be read (-32600). Each error's "data" holds the deny fields every
 * other L7 denial carries (docs/proxy.md "Deny bodies").
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#define RPC_DENIED (-32001)
#define RPC_WITHHELD (-32002)
#define RPC_INVALID (-32600)

/* The deny fields of one call (k NULL: of the request). New reference. */
static json_t *deny_data(struct proxy_conn *c, const struct proxy_verdict *v,
                         const struct model_rpc_call *k, const char *detail, const char *policy)
{
    json_t *o = json_object();
    json_t *miss = json_object();
    char path[CANON_MAX];
    bool has_bin = v->binary != NULL && v->binary[0] != '\0' && strcmp(v->binary, "-") != 0;
    const char *host = c->nhost[0] != '\0' ? c->nhost : c->host;

    json_object_set_new(o, "error", json_string("policy_denied"));
    json_object_set_new(o, "policy", proxy_reply_jstr(policy));
    json_object_set_new(o, "detail", proxy_reply_jstr(detail));
    json_object_set_new(o, "layer", json_string("l7"));
    json_object_set_new(o, "protocol", json_string(v->rpc_mcp ? "mcp" : "json-rpc"));
    json_object_set_new(o, "method", proxy_reply_jstr(c->cur.method));
    json_object_set_new(o, "path", proxy_reply_jstr(proxy_conn_cur_path(c, path, sizeof(path))));
    json_object_set_new(o, "host", proxy_reply_jstr(host));
    json_object_set_new(o, "port", json_integer(c->port));
    if (has_bin) {
        json_object_set_new(o, "binary", proxy_reply_jstr(v->binary));
    }
    if (k != NULL) {
        json_t *call = json_object();
        json_object_set_new(call, "kind", json_string(model_rpc_kind_name(k->kind)));
        json_object_set_new(call, "method", proxy_reply_jstr(k->method));
        if (k->tool != NULL) {
            json_object_set_new(call, "tool", proxy_reply_jstr(k->tool));
        }
        json_object_set_new(o, "call", call);
        /* what a rule of the endpoint would have to allow */
        json_object_set_new(miss, "type", json_string(v->rpc_mcp ? "mcp_call" : "rpc_call"));
        json_object_set_new(miss, "layer", json_string("l7"));
        json_object_set_new(miss, "method", proxy_reply_jstr(k->method));
        if (k->tool != NULL) {
            json_object_set_new(miss, "tool", proxy_reply_jstr(k->tool));
        }
        json_object_set_new(miss, "host", proxy_reply_jstr(host));
        json_object_set_new(miss, "port", json_integer(c->port));
        if (has_bin) {
            json_object_set_new(miss, "binary", proxy_reply_jstr(v->binary));
        }
        json_object_set_new(o, "rule_missing", miss);
    } else {
        json_decref(miss); /* nothing read: no rule lifts this, the request must change */
    }
    proxy_reply_advice(o, proxy_server_skill(c->srv));
    return o;
}

/* {"jsonrpc":"2.0","id":ID,"error":{"code","message","data"}}; 'id' is
 * JSON text ("" for null). New reference. */
static json_t *error_obj(const char *id, int code, const char *message, json_t *data)
{
    json_t *o = json_object();
    json_t *e = json_object();
    json_t *idv = id[0] != '\0' ? json_loads(id, JSON_DECODE_ANY, NULL) : NULL;

    json_object_set_new(o, "jsonrpc", json_string("2.0"));
    json_object_set_new(o, "id", idv != NULL ? idv : json_null());
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", proxy_reply_jstr(message));
    json_object_set_new(e, "data", data);
    json_object_set_new(o, "error", e);
    return o;
}

static void send_json(struct proxy_conn *c, unsigned status, json_t *body)
{
    char *s = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    char head[256];
    size_t hl;
    size_t bl = s != NULL ? strlen(s) : 0;
    char *all;

    json_decref(body);
    if (s == NULL) {
        proxy_conn_reply_bare(c, 500);
        return;
    }
    hl = proxy_reply_json_head(status, bl, head, sizeof(head));
    all = hl > 0 ? pv_malloc(hl + bl) : NULL;
    if (all == NULL) {
        free(s);
        proxy_conn_reply_bare(c, 500);
        return;
    }
    memcpy(all, head, hl);
    memcpy(all + hl, s, bl);
    proxy_conn_reply_close(c, all, hl + bl);
    free(all);
    free(s);
}

void proxy_rpc_deny(struct proxy_conn *c, const struct proxy_verdict *v, const char *detail)
{
    const struct model_rpc_calls *k = proxy_rpc_calls(c);
    const struct proxy_rpc_result *res = proxy_rpc_results(c);
    json_t *errs;
    size_t nreq = 0;
    bool calls_denied = false;

    if (k == NULL || res == NULL) {
        bool refused = strstr(detail, "JSON-RPC request refused") != NULL;
        send_json(c, 403,
                  error_obj("", refused ? RPC_INVALID : RPC_DENIED,
                            refused ? "Invalid Request: refused by proviso" : "denied by policy",
                            deny_data(c, v, NULL, detail, v->policy)));
        return;
    }
    for (size_t i = 0; i < k->ncalls; i++) {
        nreq += k->calls[i].kind == MODEL_RPC_REQUEST;
        calls_denied = calls_denied || !res[i].allow;
    }
    if (nreq == 0) {
        const struct model_rpc_call *first = v->rpc_call != NULL ? v->rpc_call : &k->calls[0];
        send_json(c, 403,
                  error_obj("", RPC_DENIED, "denied by policy",
                            deny_data(c, v, first, detail, v->policy)));
        return;
    }
    errs = json_array();
    for (size_t i = 0; i < k->ncalls; i++) {
        const struct model_rpc_call *call = &k->calls[i];
        json_t *e;
        if (call->kind != MODEL_RPC_REQUEST) {
            continue;
        }
        if (!res[i].allow) {
            e = error_obj(call->id, RPC_DENIED, "denied by policy",
                          deny_data(c, v, call, res[i].detail, res[i].policy));
        } else if (calls_denied) {
            e = error_obj(call->id, RPC_WITHHELD,
                          "not sent: another call of this batch was denied by policy",
                          deny_data(c, v, call, "withheld with the batch", res[i].policy));
        } else {
            /* every call passed, the request did not (its destination, a
             * credential): each request gets the request's reason */
            e = error_obj(call->id, RPC_DENIED, "denied by policy",
                          deny_data(c, v, call, detail, v->policy));
        }
        json_array_append_new(errs, e);
    }
    if (!k->batch && json_array_size(errs) == 1) {
        json_t *one = json_incref(json_array_get(errs, 0));
        json_decref(errs);
        errs = one;
    }
    send_json(c, 200, errs);
}
