/* SPDX-License-Identifier: Apache-2.0 */
/* model_graphql.h - GraphQL operations as the policy sees them
 *
 * A GraphQL request is decided by what it would execute: the operation's
 * type, its name and the names of its root fields (docs/semantics.md#graphql).
 * struct model_gql_op carries exactly those dimensions from the reader
 * (model_graphql.c: documents, GraphQL-over-HTTP GET/POST, persisted
 * queries) to the evaluator (model_eval.c) and the prover's witnesses.
 */
#ifndef MODEL_GRAPHQL_H
#define MODEL_GRAPHQL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/pv.h"

enum model_gql_optype {
    MODEL_GQL_QUERY,
    MODEL_GQL_MUTATION,
    MODEL_GQL_SUBSCRIPTION,
};

/* One operation, reduced to what policies match. */
struct model_gql_op {
    enum model_gql_optype type;
    char *name;    /* operation name; NULL for an anonymous operation */
    char **fields; /* root field names (never aliases): sorted, unique, at least one */
    size_t nfields;
    /* Hash-only persisted query: the sha256Hash or saved-query id the
     * request named instead of a document. type, name and fields are then
     * unset: the evaluator takes them from the matched endpoint's
     * graphql_persisted_queries entry, or denies (persisted_queries: deny). */
    char *persisted_id;
};

const char *model_gql_optype_name(enum model_gql_optype t);
void model_gql_op_clear(struct model_gql_op *op);

/* Reader limits (docs/proxy.md#graphql): a document longer than
 * MODEL_GQL_MAX_DOCUMENT bytes, with more than MODEL_GQL_MAX_TOKENS
 * tokens, or nesting selection sets, list/object values and list types
 * deeper than MODEL_GQL_MAX_DEPTH is refused; so is a batch of more than
 * MODEL_GQL_MAX_BATCH operations. */
#define MODEL_GQL_MAX_DOCUMENT (1024 * 1024)
#define MODEL_GQL_MAX_TOKENS 65536
#define MODEL_GQL_MAX_DEPTH 64
#define MODEL_GQL_MAX_BATCH 64
/* Default of an endpoint's graphql_max_body_bytes. */
#define MODEL_GQL_DEFAULT_MAX_BODY 65536

/* Read the executable GraphQL document 'doc' ('len' bytes, UTF-8; borrowed)
 * and reduce the operation it would run to 'out' (cleared first; caller
 * clears). 'opname' (borrowed; NULL: absent) selects the operation; without
 * it the document must hold exactly one. Root fields are collected through
 * fragment spreads and inline fragments at the root, transitively; directives
 * never remove a field. Refused, never guessed: syntax errors, type-system
 * definitions, several operations without 'opname', an unknown 'opname',
 * undefined or cyclic fragments, duplicate operation or fragment names, an
 * anonymous operation beside others, and the limits above.
 * Returns PV_ERR_PARSE (PV_ERR_TOOBIG for a limit, PV_ERR_NOMEM) and writes
 * "line:col: reason" (or a reason without position) to 'err' ('errlen'
 * bytes, always NUL-terminated when errlen > 0). */
pv_result model_gql_read(const char *doc, size_t len, const char *opname, struct model_gql_op *out,
                         char *err, size_t errlen) PV_WUR;

/* The operations one GraphQL-over-HTTP request would run (one, or one per
 * element of a batched POST array). */
struct model_gql_ops {
    struct model_gql_op *ops;
    size_t nops;
    bool batch; /* the body was a JSON array */
};

/* One HTTP request as the reader sees it (all borrowed). */
struct model_gql_http {
    const char *method;
    const char *target; /* request-target "path?query" */
    size_t target_len;
    const char *content_type; /* Content-Type field value; NULL: absent */
    const char *body;
    size_t body_len;
    size_t max_body; /* the endpoint's graphql_max_body_bytes; 0: default */
};

/* Extract the operations of a GraphQL-over-HTTP request into 'out'
 * (cleared first; caller frees with model_gql_ops_clear): GET with the query
 * parameters query, operationName, variables and extensions; POST with an
 * application/json body (an object or a batch array) or an
 * application/graphql body. A request naming only a persisted query
 * (extensions.persistedQuery.sha256Hash, no query) yields an operation with
 * persisted_id set; a query sent with a hash must hash to it. Anything else
 * is refused with a reason in 'err' (as model_gql_read): PV_ERR_TOOBIG for a
 * body over 'max_body', PV_ERR_PROTO for a request that is not GraphQL,
 * PV_ERR_PARSE for a malformed one. */
pv_result model_gql_http_read(const struct model_gql_http *in, struct model_gql_ops *out, char *err,
                              size_t errlen) PV_WUR;
void model_gql_ops_clear(struct model_gql_ops *ops);

/* The body bound of endpoint 'e' (borrowed): its graphql_max_body_bytes,
 * or MODEL_GQL_DEFAULT_MAX_BODY when unset. */
struct model_endpoint;
size_t model_endpoint_gql_max_body(const struct model_endpoint *e);
/* Is 'e' (borrowed; NULL: no) a protocol: graphql endpoint? */
bool model_endpoint_is_graphql(const struct model_endpoint *e);

/* Write "type name(f1,f2)" (name "-" when anonymous, "persisted:<id>" for a
 * hash-only operation) to 'buf' ('len' bytes, truncated, NUL-terminated). */
void model_gql_op_describe(const struct model_gql_op *op, char *buf, size_t len);

#endif
