/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_graphql.c - libFuzzer target: the GraphQL reader and its HTTP extraction
 *
 * The first byte picks the entry: model_gql_read() without an operation
 * name or with the input's first line as one, or model_gql_http_read() on a
 * POST application/json body, a POST application/graphql body, or a GET
 * target. Checked: a refusal explains itself and leaves nothing allocated in
 * the result; an accepted operation has a valid type, a Name (or none) and
 * at least one root field, sorted, unique, each a Name; a hash-only
 * operation has 64 lower-case hex digits and no fields; an accepted
 * document read again with a comment and a BOM around it gives the same
 * operation.
 *   ./tests/fuzz/fuzz_graphql -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_graphql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_gql_name(const char *s)
{
    if (s == NULL || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) {
        return false;
    }
    for (s++; *s; s++) {
        if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9'))) {
            return false;
        }
    }
    return true;
}

static void check_op(const struct model_gql_op *op)
{
    if (op->persisted_id != NULL) {
        if (strlen(op->persisted_id) != 64 || strspn(op->persisted_id, "0123456789abcdef") != 64 ||
            op->nfields != 0 || op->name != NULL) {
            abort();
        }
        return;
    }
    if (op->type != MODEL_GQL_QUERY && op->type != MODEL_GQL_MUTATION &&
        op->type != MODEL_GQL_SUBSCRIPTION) {
        abort();
    }
    if ((op->name != NULL && !is_gql_name(op->name)) || op->nfields == 0) {
        abort();
    }
    for (size_t i = 0; i < op->nfields; i++) {
        if (!is_gql_name(op->fields[i]) ||
            (i > 0 && strcmp(op->fields[i - 1], op->fields[i]) >= 0)) {
            abort();
        }
    }
}

static bool same_op(const struct model_gql_op *a, const struct model_gql_op *b)
{
    if (a->type != b->type || a->nfields != b->nfields || (a->name == NULL) != (b->name == NULL) ||
        (a->name != NULL && strcmp(a->name, b->name) != 0)) {
        return false;
    }
    for (size_t i = 0; i < a->nfields; i++) {
        if (strcmp(a->fields[i], b->fields[i]) != 0) {
            return false;
        }
    }
    return true;
}

static void check_refusal(pv_result r, const char *err)
{
    if (pv_ok(r) || err[0] == '\0') {
        abort();
    }
}

static void read_doc(const char *doc, size_t len, const char *opname)
{
    struct model_gql_op op;
    char err[256];
    pv_result r = model_gql_read(doc, len, opname, &op, err, sizeof(err));
    if (!pv_ok(r)) {
        check_refusal(r, err);
        if (op.fields != NULL || op.name != NULL || op.nfields != 0) {
            abort();
        }
        return;
    }
    check_op(&op);
    /* ignored tokens around the document change nothing */
    char *wrapped = malloc(len + 16);
    if (wrapped == NULL) {
        abort();
    }
    memcpy(wrapped, "\xEF\xBB\xBF#c\n", 6);
    memcpy(wrapped + 6, doc, len);
    memcpy(wrapped + 6 + len, "\n,\t", 3);
    struct model_gql_op again;
    r = model_gql_read(wrapped, len + 9, opname, &again, err, sizeof(err));
    if (!pv_ok(r) || !same_op(&op, &again)) {
        abort();
    }
    model_gql_op_clear(&again);
    model_gql_op_clear(&op);
    free(wrapped);
}

static void read_http(const char *method, const char *ctype, const char *target, size_t tlen,
                      const char *body, size_t blen)
{
    struct model_gql_http in = {method, target, tlen, ctype, body, blen, 0};
    struct model_gql_ops ops;
    char err[256];
    pv_result r = model_gql_http_read(&in, &ops, err, sizeof(err));
    if (!pv_ok(r)) {
        check_refusal(r, err);
        if (ops.ops != NULL || ops.nops != 0) {
            abort();
        }
        return;
    }
    if (ops.nops == 0 || (!ops.batch && ops.nops != 1) || ops.nops > MODEL_GQL_MAX_BATCH) {
        abort();
    }
    for (size_t i = 0; i < ops.nops; i++) {
        check_op(&ops.ops[i]);
    }
    model_gql_ops_clear(&ops);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 5) {
    case 0:
        read_doc(in, len, NULL);
        break;
    case 1: {
        const char *nl = memchr(in, '\n', len);
        size_t nlen = nl != NULL ? (size_t)(nl - in) : 0;
        char *name = malloc(nlen + 1);
        if (name == NULL) {
            abort();
        }
        memcpy(name, in, nlen);
        name[nlen] = '\0';
        size_t skip = nl != NULL ? nlen + 1 : 0;
        read_doc(in + skip, len - skip, name);
        free(name);
        break;
    }
    case 2:
        read_http("POST", "application/json", "/graphql", 8, in, len);
        break;
    case 3:
        read_http("POST", "application/graphql", "/graphql?operationName=A", 24, in, len);
        break;
    default:
        read_http("GET", NULL, in, len, "", 0);
        break;
    }
    return 0;
}
