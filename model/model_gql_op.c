/* SPDX-License-Identifier: Apache-2.0 */
/* model_gql_op.c - the GraphQL operation value: names, checks, clearing
 *
 * struct model_gql_op (model_graphql.h) is what the evaluator, the prover's
 * witnesses and `proviso eval` exchange about a GraphQL request
 * (docs/semantics.md#graphql). This file holds the small functions on the
 * value itself; the reader of documents is model_graphql.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_graphql.h"
#include "model/model_int.h"

const char *model_gql_optype_name(enum model_gql_optype t)
{
    switch (t) {
    case MODEL_GQL_QUERY:
        return "query";
    case MODEL_GQL_MUTATION:
        return "mutation";
    case MODEL_GQL_SUBSCRIPTION:
        return "subscription";
    }
    return "unknown";
}

bool model_gql_optype_parse(const char *s, enum model_gql_optype *out)
{
    static const enum model_gql_optype all[] = {MODEL_GQL_QUERY, MODEL_GQL_MUTATION,
                                                MODEL_GQL_SUBSCRIPTION};

    for (size_t i = 0; s != NULL && i < PV_ARRAY_LEN(all); i++) {
        if (strcmp(s, model_gql_optype_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#graphql-names
 *# A name (*n* or a member of *F*) is a GraphQL *Name*: `[_A-Za-z][_0-9A-Za-z]*` */
bool model_gql_name_valid(const char *s, size_t len)
{
    if (s == NULL || len == 0) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';

        if (!alpha && (i == 0 || ch < '0' || ch > '9')) {
            return false;
        }
    }
    return true;
}

void model_gql_op_clear(struct model_gql_op *op)
{
    if (op == NULL) {
        return;
    }
    free(op->name);
    for (size_t i = 0; i < op->nfields; i++) {
        free(op->fields[i]);
    }
    free(op->fields);
    free(op->persisted_id);
    memset(op, 0, sizeof(*op));
}
