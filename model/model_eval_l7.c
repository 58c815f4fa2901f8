/* SPDX-License-Identifier: Apache-2.0 */
/* model_eval_l7.c - the evaluator's L7 matching: methods, queries, rules, GraphQL
 *
 * Whether one endpoint's rules grant the request prepared by model_eval.c
 * (docs/semantics.md#l7 onwards): method and query matching, allow and deny
 * rules, the GraphQL operation against operation rules and the persisted
 * query registry. Pure, like the rest of the evaluator.
 */
#include "config.h"

#include <string.h>

#include "common/pv_text.h"
#include "model/model_graphql.h"
#include "model/model_eval.h"

/*= docs/semantics.md#methods
 *# A rule method `*` matches any method. A `GET` rule (allow or deny) also
 *# matches `HEAD`. `OPTIONS` is never implied. */
static bool method_match(const struct eval_ctx *c, const char *m, bool deny)
{
    size_t i;

    if (m == NULL || m[0] == '\0') {
        /* A matcher without a method: allow rules grant nothing, deny rules
         * fire on every method (both fail closed). */
        return deny;
    }
    if (m[0] == '*' && m[1] == '\0') {
        return true;
    }
    for (i = 0; i < c->method_len && m[i] != '\0'; i++) {
        char ch = m[i];
        if (ch >= 'a' && ch <= 'z') {
            ch = (char)(ch - 'a' + 'A');
        }
        if (ch != c->method[i]) {
            break;
        }
    }
    if (m[i] == '\0' && i == c->method_len) {
        return true;
    }
    return c->method_head && (m[0] == 'G' || m[0] == 'g') && (m[1] == 'E' || m[1] == 'e') &&
           (m[2] == 'T' || m[2] == 't') && m[3] == '\0';
}

/* Iterate decoded query pairs: returns the next offset, or 0 at the end. */
static size_t qnext(const struct eval_ctx *c, size_t off, const char **k, size_t *klen,
                    const char **v, size_t *vlen)
{
    if (off >= c->qlen) {
        return 0;
    }
    *k = c->qbuf + off;
    *klen = strlen(*k);
    *v = *k + *klen + 1;
    *vlen = strlen(*v);
    return off + *klen + 1 + *vlen + 1;
}

static bool value_match(const struct model_query *q, const char *v, size_t vlen)
{
    for (size_t j = 0; j < q->globs.n; j++) {
        if (model_glob_match(q->compiled[j], v, vlen)) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#query-allow
 *# An allow rule's `query` matches when every configured key is present and
 *# **every** value of that key matches one of its globs. */
/*= docs/semantics.md#query-deny
 *# A deny rule's `query` matches when every configured key is present and
 *# **some** value of that key matches one of its globs. */
static bool query_match(const struct eval_ctx *c, const struct model_query *q, bool deny)
{
    const char *key = q->key.s != NULL ? q->key.s : "";
    size_t keylen = strlen(key);
    bool present = false;
    size_t off = 0;
    const char *k;
    const char *v;
    size_t klen;
    size_t vlen;

    if (q->compiled == NULL) {
        return deny; /* not compiled: fail closed */
    }
    while ((off = qnext(c, off, &k, &klen, &v, &vlen)) != 0) {
        bool m;
        if (klen != keylen || memcmp(k, key, klen) != 0) {
            continue;
        }
        present = true;
        m = value_match(q, v, vlen);
        if (deny && m) {
            return true;
        }
        if (!deny && !m) {
            return false;
        }
    }
    return present && !deny;
}

static bool l7rule_match(const struct eval_ctx *c, const struct model_l7rule *r, bool deny)
{
    if (!method_match(c, r->method.s, deny)) {
        return false;
    }
    if (r->path_glob != NULL) {
        if (!model_glob_match(r->path_glob, c->path, c->path_len)) {
            return false;
        }
    } else if (r->path.s != NULL && r->path.s[0] != '\0') {
        return deny; /* not compiled: fail closed */
    }
    for (size_t i = 0; i < r->nquery; i++) {
        if (!query_match(c, &r->query[i], deny)) {
            return false;
        }
    }
    return true;
}

/* --- GraphQL matching ----------------------------------------------------- */

/*= docs/semantics.md#graphql-names
 *# An operation whose name or a root field is not a Name, or whose *F* is
 *# empty, is not readable */
enum gql_state model_ev_gql_check(const struct model_gql_op *op)
{
    if (op == NULL) {
        return GQ_NONE;
    }
    if (op->persisted_id != NULL) {
        return op->persisted_id[0] != '\0' ? GQ_OK : GQ_BAD;
    }
    if ((unsigned)op->type > (unsigned)MODEL_GQL_SUBSCRIPTION || op->nfields == 0 ||
        op->fields == NULL) {
        return GQ_BAD;
    }
    if (op->name != NULL && !model_gql_name_valid(op->name, strlen(op->name))) {
        return GQ_BAD;
    }
    for (size_t i = 0; i < op->nfields; i++) {
        if (op->fields[i] == NULL || !model_gql_name_valid(op->fields[i], strlen(op->fields[i]))) {
            return GQ_BAD;
        }
    }
    return GQ_OK;
}

static bool persisted_on(const struct model_endpoint *e)
{
    return e->persisted_queries.s != NULL &&
           strcmp(e->persisted_queries.s, "allow_registered") == 0;
}

/* The operation endpoint 'e' decides for this request, or NULL and why not.
 *= docs/semantics.md#graphql-persisted
 *# Under `allow_registered` it is decided exactly as the document operation
 *# *(t, n, F)* of the endpoint's `graphql_persisted_queries` entry keyed *id* */
static const struct model_gql_op *
gql_resolve(const struct eval_ctx *c, const struct model_endpoint *e, enum model_reason *why)
{
    const struct model_gql_op *op = c->req->gql;

    if (op == NULL || c->gq == GQ_NONE) {
        *why = MODEL_REASON_GQL_NO_OPERATION;
        return NULL;
    }
    if (c->gq == GQ_BAD) {
        *why = MODEL_REASON_GQL_BAD_OPERATION;
        return NULL;
    }
    if (op->persisted_id == NULL) {
        return op;
    }
    if (!persisted_on(e)) {
        *why = MODEL_REASON_GQL_PERSISTED_DENIED;
        return NULL;
    }
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        const struct model_gql_persisted *g = &e->gql_persisted[i];
        if (g->op_ok && g->id.s != NULL && strcmp(g->id.s, op->persisted_id) == 0) {
            return &g->op;
        }
    }
    *why = MODEL_REASON_GQL_PERSISTED_UNKNOWN;
    return NULL;
}

/*= docs/semantics.md#graphql-allow
 *# it has no `operation_name`, or *n* ≠ ⊥ and *n* matches the glob. **An
 *# anonymous operation matches only rules without `operation_name`** */
static bool gql_name_match(const struct model_l7rule *r, const struct model_gql_op *op)
{
    if (r->operation_name.s == NULL) {
        return true;
    }
    return op->name != NULL && r->name_glob != NULL &&
           model_glob_match(r->name_glob, op->name, strlen(op->name));
}

static bool gql_field_match(const struct model_l7rule *r, const char *f)
{
    size_t len = strlen(f);

    for (size_t i = 0; i < r->fields.n; i++) {
        if (r->field_globs[i] != NULL && model_glob_match(r->field_globs[i], f, len)) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#graphql-allow
 *# it has no `fields`, or **every** member of *F* matches some glob of that
 *# same rule's `fields`. */
/*= docs/semantics.md#graphql-deny
 *# it has no `fields` or **some** member of *F* matches one of its globs */
static bool gql_rule_match(const struct model_l7rule *r, const struct model_gql_op *op, bool deny)
{
    if ((r->gql_types & (1u << op->type)) == 0 || !gql_name_match(r, op)) {
        return false;
    }
    if (r->fields.n == 0) {
        return true;
    }
    if (r->field_globs == NULL || op->nfields == 0) {
        /* not compiled, or a registry entry without fields: fail closed */
        return deny;
    }
    for (size_t i = 0; i < op->nfields; i++) {
        bool m = gql_field_match(r, op->fields[i]);
        if (deny && m) {
            return true;
        }
        if (!deny && !m) {
            return false;
        }
    }
    return !deny;
}

bool model_ev_deny_rules_match(const struct eval_ctx *c, const struct model_endpoint *e)
{
    const struct model_gql_op *op = NULL;
    enum model_reason why;
    bool resolved = false;

    if (e->proto == MODEL_PROTO_JSONRPC || e->proto == MODEL_PROTO_MCP) {
        return model_ev_rpc_deny(c, e);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        const struct model_l7rule *r = &e->deny_rules[i];
        if (r->gql_types == 0) {
            if (l7rule_match(c, r, true)) {
                return true;
            }
            continue;
        }
        /*= docs/semantics.md#graphql-deny
         *# GraphQL deny rules never match a request without an operation */
        if (!resolved) {
            op = gql_resolve(c, e, &why);
            resolved = true;
        }
        if (op != NULL && gql_rule_match(r, op, true)) {
            return true;
        }
    }
    return false;
}

static bool allow_rules_match(const struct eval_ctx *c, const struct model_endpoint *e)
{
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types == 0 && l7rule_match(c, &e->eff_rules[i], false)) {
            return true;
        }
    }
    return false;
}

size_t model_endpoint_gql_npersisted(const struct model_endpoint *e)
{
    return e != NULL && persisted_on(e) ? e->ngql_persisted : 0;
}

const char *model_endpoint_gql_persisted_id(const struct model_endpoint *e, size_t i)
{
    return i < model_endpoint_gql_npersisted(e) ? e->gql_persisted[i].id.s : NULL;
}

bool model_endpoint_gql_persisted_match(const struct model_endpoint *e, const char *id, bool deny,
                                        bool *is_query)
{
    const struct model_gql_op *op = NULL;

    *is_query = false;
    for (size_t i = 0; i < model_endpoint_gql_npersisted(e) && op == NULL; i++) {
        const struct model_gql_persisted *g = &e->gql_persisted[i];
        if (g->op_ok && g->id.s != NULL && id != NULL && strcmp(g->id.s, id) == 0) {
            op = &g->op;
        }
    }
    if (op == NULL) {
        return false;
    }
    *is_query = op->type == MODEL_GQL_QUERY;
    for (size_t i = 0; deny && i < e->ndeny; i++) {
        if (e->deny_rules[i].gql_types != 0 && gql_rule_match(&e->deny_rules[i], op, true)) {
            return true;
        }
    }
    for (size_t i = 0; !deny && i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types != 0 && gql_rule_match(&e->eff_rules[i], op, false)) {
            return true;
        }
    }
    return false;
}

/* MODEL_REASON_ALLOWED when a GraphQL allow rule of 'e' matches the request's
 * operation, else why not. */
static enum model_reason gql_allow(const struct eval_ctx *c, const struct model_endpoint *e,
                                   bool http)
{
    enum model_reason why = MODEL_REASON_L7_NOT_PERMITTED;
    bool post = c->method_len == 4 && memcmp(c->method, "POST", 4) == 0;
    bool get = c->method_len == 3 && memcmp(c->method, "GET", 3) == 0;
    const struct model_gql_op *op;

    /*= docs/semantics.md#graphql-http
     *# its method is `POST`, or `GET` with an operation of type `query` */
    if (http && !post && !get) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    /*= docs/semantics.md#graphql-ws
     *# a request with method `WEBSOCKET_TEXT`, the upgrade's path and its
     *# operation *o* */
    if (!http && !(c->method_len == 14 && memcmp(c->method, "WEBSOCKET_TEXT", 14) == 0)) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    op = gql_resolve(c, e, &why);
    if (op == NULL) {
        return why;
    }
    if (http && get && op->type != MODEL_GQL_QUERY) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types != 0 && gql_rule_match(&e->eff_rules[i], op, false)) {
            return MODEL_REASON_ALLOWED;
        }
    }
    return MODEL_REASON_L7_NOT_PERMITTED;
}

/* Has the endpoint a GraphQL allow rule (one with an operation type)? */
static bool has_gql_allow(const struct model_endpoint *e)
{
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types != 0) {
            return true;
        }
    }
    return false;
}

/* What the allow rules of an enforced unit say: MODEL_REASON_ALLOWED or why not. */
static enum model_reason rules_grant(const struct eval_ctx *c, const struct ix_ep *x)
{
    /*= docs/semantics.md#graphql-ws-rules
     *# On a `websocket` unit with GraphQL allow rules a request with an
     *# operation is granted by those rules only (#graphql-allow), and one
     *# without an operation (the GET upgrade, plain text messages) by its
     *# method rules only. On a `websocket` unit without GraphQL allow rules
     *# every request, an operation message included, is granted by its method
     *# rules */
    if (x->ep->proto == MODEL_PROTO_GRAPHQL) {
        return gql_allow(c, x->ep, true);
    }
    if (x->ep->proto == MODEL_PROTO_JSONRPC || x->ep->proto == MODEL_PROTO_MCP) {
        return model_ev_rpc_allow(c, x->ep);
    }
    if (x->ep->proto == MODEL_PROTO_WEBSOCKET && c->req->gql != NULL) {
        enum model_reason why = MODEL_REASON_L7_NOT_PERMITTED;
        if (has_gql_allow(x->ep)) {
            return gql_allow(c, x->ep, false);
        }
        /*= docs/semantics.md#graphql-ws-rules
         *# an operation that its deny rules cannot read (a hash-only one the
         *# registry does not resolve) is denied as in #graphql-persisted */
        if (gql_resolve(c, x->ep, &why) == NULL) {
            return why;
        }
    }
    return allow_rules_match(c, x->ep) ? MODEL_REASON_ALLOWED : MODEL_REASON_L7_NOT_PERMITTED;
}

/* Is the unit in G (its endpoint path scope matches the canonical path)? */
bool model_ev_in_scope(const struct eval_ctx *c, const struct ix_ep *x)
{
    if (x->ep->path_glob != NULL) {
        return model_glob_match(x->ep->path_glob, c->path, c->path_len);
    }
    return x->ep->path.s == NULL || x->ep->path.s[0] == '\0';
}

/* How unit x grants the request; for UG_NONE_RULES, *why says why not. */
enum unit_grant model_ev_unit_grants(const struct eval_ctx *c, const struct ix_ep *x,
                                     enum model_reason *why)
{
    *why = MODEL_REASON_L7_NOT_PERMITTED;
    /*= docs/semantics.md#encoded-slash
     *# if the canonical path contains an encoded slash `%2F`, only when the
     *# endpoint sets `allow_encoded_slash`. */
    if (c->enc_slash && !x->ep->allow_encoded_slash) {
        return UG_NONE_SLASH;
    }
    switch ((enum ix_grant)x->grant) {
    case IXG_L4:
        return UG_STRONG;
    case IXG_RULES:
    case IXG_GRAPHQL:
    case IXG_RPC:
        *why = rules_grant(c, x);
        return *why == MODEL_REASON_ALLOWED ? UG_STRONG : UG_NONE_RULES;
    case IXG_AUDIT:
        /* Audit grants everything; it is "strong" when the rules alone
         * would have allowed the request, so the reason says audit only
         * when audit mode made the difference. */
        if (x->rest_like && rules_grant(c, x) == MODEL_REASON_ALLOWED &&
            !model_ev_deny_rules_match(c, x->ep)) {
            return UG_STRONG;
        }
        return UG_AUDIT;
    case IXG_UNSUPPORTED:
        return UG_NONE_UNSUPPORTED;
    }
    return UG_NONE_RULES;
}
