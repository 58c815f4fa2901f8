/* SPDX-License-Identifier: Apache-2.0 */
/* model_eval.h - the evaluator's request state, shared by its three files (model/ only)
 *
 * model_eval.c decides (candidates, identities, reach and L7 verdicts, the
 * entry point model_decide()); model_eval_l7.c matches one request against
 * an endpoint's L7 rules (methods, paths, queries, GraphQL operations and
 * persisted queries); model_eval_detail.c names reasons and routes and
 * writes the decision's detail text. All of it stays pure: no I/O, no
 * allocation.
 */
#ifndef MODEL_EVAL_H
#define MODEL_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model_graphql.h"
#include "model/model_int.h"

/* ===========================================================================
 * Limits
 * ========================================================================= */

#define EVAL_MAX_CANDS 256u             /* candidate (rule, endpoint) pairs on the stack */
#define EVAL_HOST_BUF 256u              /* normalised host: at most 253 bytes + NUL */
#define EVAL_PATH_BUF (3u * 4096u + 1u) /* canonical path (re-encoding may grow it) */
#define EVAL_QUERY_MAX 16384u           /* raw query bytes; longer is a malformed request */
#define EVAL_QUERY_BUF (2u * EVAL_QUERY_MAX + 2u) /* decoded "key\0value\0" pairs */
#define EVAL_METHOD_MAX 32u                       /* bytes of an HTTP method */

/* ===========================================================================
 * Decision: request state
 * ========================================================================= */

enum prep_state { PREP_TODO, PREP_OK, PREP_BAD_METHOD, PREP_BAD_TARGET, PREP_BAD_QUERY };

/* The request's GraphQL operation (docs/semantics.md#graphql). */
enum gql_state { GQ_NONE, GQ_OK, GQ_BAD };

struct eval_ctx {
    const struct model_policy *p;
    const struct model_index *ix;
    const struct model_request *req;
    char host[EVAL_HOST_BUF];
    size_t host_len;
    bool host_is_ip;
    bool host_ll; /* link-local host (docs/semantics.md#link-local) */
    struct model_ip host_ip;
    const struct model_ip *dest; /* req->dest, else the IP host itself, else NULL */
    size_t nid;
    size_t idlen[MODEL_MAX_IDENTITY];
    uint32_t idok; /* bit k: identity entry k is a canonical path */
    uint32_t cands[EVAL_MAX_CANDS];
    uint32_t masks[EVAL_MAX_CANDS];
    size_t ncands;
    bool scan; /* too many candidates: visit every endpoint */
    /* Request-level data, prepared once for all identities. */
    enum prep_state prep;
    enum model_target_status target_status;
    char method[EVAL_METHOD_MAX + 1];
    size_t method_len;
    bool method_head;
    char path[EVAL_PATH_BUF];
    size_t path_len;
    bool enc_slash;
    enum gql_state gq;
    bool q_semicolon; /* the query has a raw ';' (docs/semantics.md#query-semicolon) */
    char *qbuf;       /* decoded pairs "key\0value\0..." */
    size_t qlen;
    char qstore[EVAL_QUERY_BUF];
};

/* The verdict for one identity, formatted into a decision at the end. */
struct verdict {
    bool allow;
    bool grant;
    enum model_reason reason;
    enum model_route route;
    uint32_t unit; /* ep index, or EVAL_NONE */
    size_t id;     /* identity index */
};

enum unit_grant { UG_STRONG, UG_AUDIT, UG_NONE_SLASH, UG_NONE_RULES, UG_NONE_UNSUPPORTED };

/* The state of the request's GraphQL operation (model_eval_l7.c). */
enum gql_state model_ev_gql_check(const struct model_gql_op *op);
/* Whether a deny rule of 'e' matches the request. */
bool model_ev_deny_rules_match(const struct eval_ctx *c, const struct model_endpoint *e);
/* Whether the request's path is within the endpoint's `path` scope. */
bool model_ev_in_scope(const struct eval_ctx *c, const struct ix_ep *x);
/* How unit 'x' grants the request; for UG_NONE_RULES, *why says why not. */
enum unit_grant model_ev_unit_grants(const struct eval_ctx *c, const struct ix_ep *x,
                                     enum model_reason *why);
/* The call rules of a json-rpc or mcp endpoint (model_eval_rpc.c):
 * MODEL_REASON_ALLOWED or why not; whether a deny rule matches. */
enum model_reason model_ev_rpc_allow(const struct eval_ctx *c, const struct model_endpoint *e);
bool model_ev_rpc_deny(const struct eval_ctx *c, const struct model_endpoint *e);
/* Append 'str' to the decision's detail (truncating; model_eval_detail.c). */
void model_ev_dcat(struct model_decision *out, size_t *len, const char *str);
/* Printable copy of untrusted text into 'buf' (bytes outside 0x20..0x7E become '?'). */
const char *model_ev_sanitize(const char *s, size_t len, char *buf, size_t cap);
/* Write the detail of verdict 'v' into 'out'. */
void model_ev_format_detail(const struct eval_ctx *c, const struct verdict *v,
                            struct model_decision *out);

#endif /* MODEL_EVAL_H */
