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

#endif
