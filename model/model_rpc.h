/* SPDX-License-Identifier: Apache-2.0 */
/* model_rpc.h - JSON-RPC 2.0 and MCP calls as the policy sees them
 *
 * A request on a `json-rpc` or `mcp` unit is decided by the calls it
 * carries (docs/semantics.md#rpc): one per message of a POST body (a
 * request, a notification or a client response; several for a batch),
 * or one transport call for an MCP receive-stream GET or a session
 * DELETE. struct model_rpc_call carries exactly what rules match - the
 * call's kind, its method and, for tools/call, the tool - from the reader
 * (model_rpc.c) to the evaluator (model_eval_l7.c), the prover's
 * witnesses and the proxy's replies.
 */
#ifndef MODEL_RPC_H
#define MODEL_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pv.h"

enum model_rpc_kind {
    MODEL_RPC_REQUEST,      /* a message with method and id */
    MODEL_RPC_NOTIFICATION, /* a message with method, no id */
    MODEL_RPC_RESPONSE,     /* a client's result/error for a server request */
    MODEL_RPC_STREAM,       /* MCP: GET with Accept: text/event-stream, no body */
    MODEL_RPC_END,          /* MCP: DELETE, no body (session termination) */
};

/* The method names a rule uses for the calls that are no message with a
 * method of its own. JSON-RPC 2.0 reserves names that begin "rpc." for
 * the protocol itself and the reader refuses a message that uses one, so
 * no body can name these. */
#define MODEL_RPC_M_RESPONSE "rpc.response"
#define MODEL_RPC_M_STREAM "rpc.stream"
#define MODEL_RPC_M_END "rpc.end"

/* Reader limits: a batch of more than MODEL_RPC_MAX_BATCH messages, a
 * method or tool name longer than MODEL_RPC_MAX_NAME bytes, an id longer
 * than MODEL_RPC_MAX_ID bytes once written, or JSON nested deeper than
 * MODEL_RPC_MAX_DEPTH is refused. */
#define MODEL_RPC_MAX_BATCH 256
#define MODEL_RPC_MAX_NAME 256
#define MODEL_RPC_MAX_ID 128
#define MODEL_RPC_MAX_DEPTH 64
/* Default of max_body_bytes (json_rpc / mcp) when absent or 0. */
#define MODEL_RPC_DEFAULT_MAX_BODY 65536
/* The highest max_body_bytes proviso accepts (larger is a load error). */
#define MODEL_RPC_MAX_BODY_CEILING (16u * 1024u * 1024u)

/* One call, reduced to what policies match. */
struct model_rpc_call {
    enum model_rpc_kind kind;
    const char *method; /* the message's method, or MODEL_RPC_M_* */
    const char *tool;   /* tools/call: params.name; NULL otherwise */
    /* The id as JSON text ("7", "\"a\""), for the error that answers a
     * denied request; "" for a notification or a transport call. */
    char id[MODEL_RPC_MAX_ID + 1];
};

/* The calls of one HTTP request. */
struct model_rpc_calls {
    struct model_rpc_call *calls;
    size_t ncalls;
    bool batch;                   /* the body was a JSON array */
    void *storage;                /* what the names point into (owned) */
    void (*storage_free)(void *); /* frees 'storage'; NULL: a jansson tree */
};

/* One HTTP request as the reader sees it (all borrowed). */
struct model_rpc_http {
    bool mcp;                 /* the unit's protocol is mcp (else json-rpc) */
    bool strict_tools;        /* mcp.strict_tool_names */
    const char *method;       /* HTTP method */
    const char *accept;       /* Accept field value; NULL: absent */
    const char *content_type; /* Content-Type field value; NULL: absent */
    bool upgrade;             /* the request asks for a protocol upgrade (Upgrade field) */
    bool has_body;            /* Content-Length > 0 or chunked */
    const char *body;         /* POST only */
    size_t body_len;
};

/* Extract the calls of one request into 'out' (cleared first; caller
 * frees with model_rpc_calls_clear): see docs/semantics.md#rpc-read.
 * Refused with a reason in 'err' ('errlen' bytes, NUL-terminated):
 * PV_ERR_PROTO for a request that is no JSON-RPC exchange (an HTTP
 * method the protocol does not use), PV_ERR_PARSE for a malformed or
 * refused body, PV_ERR_TOOBIG for a limit, PV_ERR_NOMEM. */
pv_result model_rpc_read(const struct model_rpc_http *in, struct model_rpc_calls *out, char *err,
                         size_t errlen) PV_WUR;
/* Read one message body ('mcp', 'strict' as above) - the POST case. */
pv_result model_rpc_read_body(const char *body, size_t len, bool mcp, bool strict,
                              struct model_rpc_calls *out, char *err, size_t errlen) PV_WUR;
void model_rpc_calls_clear(struct model_rpc_calls *c);

const char *model_rpc_kind_name(enum model_rpc_kind k);
/* Parse a kind name ("request", "notification", "response", "stream", "end"). */
bool model_rpc_kind_parse(const char *s, enum model_rpc_kind *out);

/* Is 'm' a method of MCP's method profile (docs/semantics.md#rpc-profile):
 * a client-to-server request or notification of an MCP version proviso
 * knows, or one of the transport's MODEL_RPC_M_* calls? */
bool model_rpc_mcp_known(const char *m);
/* The profile's methods, for the prover and the docs test: the i-th name,
 * NULL past the end. */
const char *model_rpc_mcp_known_at(size_t i);
/* The MCP versions the profile covers, newest first; NULL past the end. */
const char *model_rpc_mcp_version_at(size_t i);

/* Does 'name' satisfy strict_tool_names (^[A-Za-z0-9_.-]{1,128}$)? */
bool model_rpc_tool_name_strict(const char *name, size_t len);

/* Endpoint accessors for the proxy (NULL endpoint: false / 0). */
struct model_endpoint;
/* Is 'e' a json-rpc or mcp endpoint (*mcp says which)? */
bool model_endpoint_is_rpc(const struct model_endpoint *e, bool *mcp);
/* Its body bound: max_body_bytes of its json_rpc or mcp options, or
 * MODEL_RPC_DEFAULT_MAX_BODY. */
size_t model_endpoint_rpc_max_body(const struct model_endpoint *e);
/* Its strict_tool_names (mcp only; default on). */
bool model_endpoint_rpc_strict_tools(const struct model_endpoint *e);

/* Write 'name' to 'buf' ('cap' bytes, truncated, NUL-terminated) with every
 * byte outside 0x21..0x7E, and \ " [ ] =, as \xHH: a name cannot forge a
 * field of a log line. Returns the length written. */
size_t model_rpc_name_escape(const char *s, char *buf, size_t cap);
/* Write "kind method[ tool T]" (names escaped as above) to 'buf' ('len'
 * bytes, truncated, NUL-terminated). */
void model_rpc_call_describe(const struct model_rpc_call *c, char *buf, size_t len);

#endif
