/* SPDX-License-Identifier: Apache-2.0 */
/* prover_encode.c - Allow_P, Grant_P and reach_P as Z3 terms
 *
 * The request r = (x, h, p, m, u, q, d) becomes: an atom index for the
 * binary x, the host h (DNS atoms, then one atom per IP literal host, then
 * one "other IP host" atom) and the path u; a 16-bit port p; a method index
 * m over a finite method universe (every method the slice names plus the
 * common ones plus one method named nowhere); one Boolean per (query key,
 * value atom) meaning "some value of the key lies in this atom"; and the
 * 128-bit destination d (IPv4 as ::ffff:a.b.c.d). An IP host fixes d.
 *
 * Every clause below cites docs/semantics.md; the concrete evaluator
 * (model_eval.c, with model_compile.c and model_index.c) implements the same
 * sentences and the property test holds the two together. The dimensions
 * and their atoms are collected in prover_dims.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

/* ---------------------------------------------------------------------------
 * Z3 helpers
 * ------------------------------------------------------------------------- */

Z3_ast prover_z(struct prover_proof *pf, Z3_ast a)
{
    if (a == NULL || Z3_get_error_code(pf->ctx) != Z3_OK) {
        pf->zerr = true;
        return NULL;
    }
    return a;
}

Z3_ast prover_true(struct prover_proof *pf)
{
    return prover_z(pf, Z3_mk_true(pf->ctx));
}

Z3_ast prover_false(struct prover_proof *pf)
{
    return prover_z(pf, Z3_mk_false(pf->ctx));
}

Z3_ast prover_not(struct prover_proof *pf, Z3_ast a)
{
    if (a == NULL) {
        pf->zerr = true;
        return NULL;
    }
    if (Z3_is_eq_ast(pf->ctx, a, Z3_mk_true(pf->ctx))) {
        return prover_false(pf);
    }
    if (Z3_is_eq_ast(pf->ctx, a, Z3_mk_false(pf->ctx))) {
        return prover_true(pf);
    }
    return prover_z(pf, Z3_mk_not(pf->ctx, a));
}

/* n-ary and/or with constant folding: true/false operands are common (L4
 * grants, absent scopes) and folding them keeps the terms small. */
static Z3_ast nary(struct prover_proof *pf, size_t n, const Z3_ast *a, bool is_and)
{
    Z3_ast small[16];
    Z3_ast *keep = small;
    size_t k = 0;
    Z3_ast unit = is_and ? Z3_mk_true(pf->ctx) : Z3_mk_false(pf->ctx);
    Z3_ast zero = is_and ? Z3_mk_false(pf->ctx) : Z3_mk_true(pf->ctx);
    Z3_ast r;

    if (n > PV_ARRAY_LEN(small)) {
        keep = pv_calloc(n, sizeof(Z3_ast));
        if (keep == NULL) {
            pf->zerr = pf->znomem = true;
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (a[i] == NULL) {
            pf->zerr = true;
            if (keep != small) {
                free(keep);
            }
            return NULL;
        }
        if (Z3_is_eq_ast(pf->ctx, a[i], unit)) {
            continue;
        }
        if (Z3_is_eq_ast(pf->ctx, a[i], zero)) {
            if (keep != small) {
                free(keep);
            }
            return zero;
        }
        keep[k++] = a[i];
    }
    if (k == 0) {
        r = unit;
    } else if (k == 1) {
        r = keep[0];
    } else if (k > UINT32_MAX) {
        r = NULL;
    } else {
        r = is_and ? Z3_mk_and(pf->ctx, (unsigned)k, keep) : Z3_mk_or(pf->ctx, (unsigned)k, keep);
    }
    if (keep != small) {
        free(keep);
    }
    return prover_z(pf, r);
}

Z3_ast prover_and(struct prover_proof *pf, size_t n, const Z3_ast *a)
{
    return nary(pf, n, a, true);
}

Z3_ast prover_or(struct prover_proof *pf, size_t n, const Z3_ast *a)
{
    return nary(pf, n, a, false);
}

Z3_ast prover_implies(struct prover_proof *pf, Z3_ast a, Z3_ast b)
{
    if (a == NULL || b == NULL) {
        pf->zerr = true; /* the operand's own failure has marked znomem if it was memory */
        return NULL;
    }
    return prover_z(pf, Z3_mk_implies(pf->ctx, a, b));
}

Z3_ast prover_and2(struct prover_proof *pf, Z3_ast a, Z3_ast b)
{
    Z3_ast v[2] = {a, b};

    return nary(pf, 2, v, true);
}

Z3_ast prover_or2(struct prover_proof *pf, Z3_ast a, Z3_ast b)
{
    Z3_ast v[2] = {a, b};

    return nary(pf, 2, v, false);
}

Z3_ast prover_eqn(struct prover_proof *pf, Z3_ast var, uint64_t v)
{
    Z3_sort s;

    if (var == NULL) {
        pf->zerr = true;
        return NULL;
    }
    s = Z3_get_sort(pf->ctx, var);
    return prover_z(pf, Z3_mk_eq(pf->ctx, var, Z3_mk_unsigned_int64(pf->ctx, v, s)));
}

/* A growable vector of terms. */
struct zvec {
    Z3_ast *v;
    size_t n, cap;
};

static void zpush(struct prover_proof *pf, struct zvec *z, Z3_ast a)
{
    void *g = prover_grow(z->v, &z->cap, z->n, sizeof(*z->v));

    /* A successful grow may have moved the vector: keep the new block
     * even when the term is missing, or the old pointer dangles. */
    if (g != NULL) {
        z->v = g;
    }
    if (g == NULL || a == NULL) {
        pf->zerr = true;
        pf->znomem = pf->znomem || g == NULL;
        return;
    }
    z->v[z->n++] = a;
}

static Z3_ast zor(struct prover_proof *pf, struct zvec *z)
{
    Z3_ast r = prover_or(pf, z->n, z->v);

    free(z->v);
    memset(z, 0, sizeof(*z));
    return r;
}

static Z3_ast zand(struct prover_proof *pf, struct zvec *z)
{
    Z3_ast r = prover_and(pf, z->n, z->v);

    free(z->v);
    memset(z, 0, sizeof(*z));
    return r;
}

unsigned prover_width_for(size_t n)
{
    unsigned w = 1;

    while (w < 32 && ((size_t)1 << w) < n) {
        w++;
    }
    return w;
}

Z3_ast prover_mk_var(struct prover_proof *pf, const char *name, unsigned width)
{
    char buf[64];
    Z3_sort s = Z3_mk_bv_sort(pf->ctx, width);

    (void)snprintf(buf, sizeof(buf), "%s%u", name, width);
    return prover_z(pf, Z3_mk_const(pf->ctx, Z3_mk_string_symbol(pf->ctx, buf), s));
}

/* var in {atoms with 'has'}; 'closed' when var ranges exactly over the atoms
 * (then a complement is shorter when most atoms qualify). */
Z3_ast prover_in_set(struct prover_proof *pf, Z3_ast var, size_t natoms, const bool *has,
                     size_t offset, bool closed)
{
    size_t cnt = 0;
    struct zvec z = {0};

    for (size_t i = 0; i < natoms; i++) {
        cnt += has[i];
    }
    if (closed && cnt * 2 > natoms) {
        for (size_t i = 0; i < natoms; i++) {
            if (!has[i]) {
                zpush(pf, &z, prover_eqn(pf, var, offset + i));
            }
        }
        return prover_not(pf, zor(pf, &z));
    }
    for (size_t i = 0; i < natoms; i++) {
        if (has[i]) {
            zpush(pf, &z, prover_eqn(pf, var, offset + i));
        }
    }
    return zor(pf, &z);
}

/* ---------------------------------------------------------------------------
 * Units
 * ------------------------------------------------------------------------- */

Z3_ast prover_host_memb(struct prover_proof *pf, const struct prover_unit *u)
{
    if (u->v.host == NULL) {
        /*= docs/semantics.md#hostless
         *# An endpoint with an empty host and a non-empty `allowed_ips` is *hostless*
         *# and matches every host on its ports except the link-local hosts (#link-local). */
        return prover_not(pf, pf->ll);
    }
    if (u->v.host_is_ip) {
        /*= docs/semantics.md#host-pattern
         *# If it is an IP literal it matches the IP host with the same address */
        return prover_eqn(pf, pf->h, pf->dns.natoms + u->hip);
    }
    /*= docs/semantics.md#host-pattern
     *# **Wildcard patterns match DNS names only, never IP hosts.** */
    return prover_memb(pf, &pf->dns, u->hpat);
}

static Z3_ast method_match(struct prover_proof *pf, const char *m, bool deny)
{
    size_t i;

    if (m == NULL || m[0] == '\0') {
        /* As the evaluator: a matcher without a method grants nothing as an
         * allow rule and fires on every method as a deny rule. */
        return deny ? prover_true(pf) : prover_false(pf);
    }
    /*= docs/semantics.md#methods
     *# A rule method `*` matches any method. A `GET` rule (allow or deny) also
     *# matches `HEAD`. `OPTIONS` is never implied. */
    if (strcmp(m, "*") == 0) {
        return prover_true(pf);
    }
    i = prover_method_index(pf, m);
    if (i == SIZE_MAX) {
        return prover_false(pf);
    }
    if (strcmp(m, "GET") == 0) {
        return prover_or2(pf, prover_eqn(pf, pf->m, i),
                          prover_eqn(pf, pf->m, prover_method_index(pf, "HEAD")));
    }
    return prover_eqn(pf, pf->m, i);
}

static Z3_ast query_match(struct prover_proof *pf, const struct model_endpoint *e, bool deny,
                          size_t ri, size_t nq)
{
    struct zvec all = {0};

    for (size_t j = 0; j < nq; j++) {
        struct model_query_view qv;
        size_t k;
        struct prover_qkey *qk;
        struct zvec z = {0};

        model_endpoint_rule_query(e, deny, ri, j, &qv);
        if (!pv_ok(prover_qkey_of(pf, qv.key, &k))) {
            pf->zerr = true;
            return NULL;
        }
        qk = &pf->qkeys[k];
        for (size_t a = 0; a < qk->dim.natoms; a++) {
            bool inside = false;

            for (size_t g = 0; g < qv.nglobs && !inside; g++) {
                size_t pi;

                if (prover_map_get(&qk->dim.index, model_glob_text(qv.globs[g]),
                                   strlen(model_glob_text(qv.globs[g])), &pi)) {
                    inside = prover_atom_has(&qk->dim, a, pi);
                }
            }
            if (deny && inside) {
                zpush(pf, &z, qk->present[a]);
            } else if (!deny && !inside) {
                zpush(pf, &z, prover_not(pf, qk->present[a]));
            }
        }
        if (deny) {
            /*= docs/semantics.md#query-deny
             *# A deny rule's `query` matches when every configured key is present and
             *# **some** value of that key matches one of its globs. */
            zpush(pf, &all, zor(pf, &z));
        } else {
            /*= docs/semantics.md#query-allow
             *# An allow rule's `query` matches when every configured key is present and
             *# **every** value of that key matches one of its globs. */
            zpush(pf, &z, qk->has);
            zpush(pf, &all, zand(pf, &z));
        }
    }
    return zand(pf, &all);
}

static Z3_ast rule_match(struct prover_proof *pf, const struct model_endpoint *e, bool deny,
                         size_t ri)
{
    struct model_l7rule_view rv;
    Z3_ast parts[3];

    if (deny) {
        model_endpoint_deny_rule(e, ri, &rv);
    } else {
        model_endpoint_allow_rule(e, ri, &rv);
    }
    parts[0] = method_match(pf, rv.method, deny);
    if (rv.path != NULL) {
        size_t pi;
        const char *t = model_glob_text(rv.path);

        if (!prover_map_get(&pf->path.index, t, strlen(t), &pi)) {
            pf->zerr = true;
            return NULL;
        }
        parts[1] = prover_memb(pf, &pf->path, pi);
    } else {
        parts[1] = prover_true(pf);
    }
    parts[2] = query_match(pf, e, deny, ri, rv.nquery);
    return prover_and(pf, 3, parts);
}

/* --- GraphQL --------------------------------------------------------------- */

static Z3_ast gql_type_match(struct prover_proof *pf, uint8_t types)
{
    struct zvec z = {0};

    for (uint64_t v = 0; v < 3; v++) {
        if ((types >> v) & 1u) {
            zpush(pf, &z, prover_eqn(pf, pf->t, v));
        }
    }
    return zor(pf, &z);
}

/*= docs/semantics.md#graphql-allow
 *# it has no `operation_name`, or *n* ≠ ⊥ and *n* matches the glob. **An
 *# anonymous operation matches only rules without `operation_name`** */
static Z3_ast gql_name_match(struct prover_proof *pf, const struct model_l7rule_view *rv)
{
    size_t pi;
    const char *t;

    if (rv->gql_name == NULL) {
        return prover_true(pf);
    }
    t = model_glob_text(rv->gql_name);
    if (!prover_map_get(&pf->gname.index, t, strlen(t), &pi)) {
        pf->zerr = true;
        return NULL;
    }
    return prover_and2(pf, prover_not(pf, pf->anon), prover_memb(pf, &pf->gname, pi));
}

/*= docs/semantics.md#graphql-allow
 *# it has no `fields`, or **every** member of *F* matches some glob of that
 *# same rule's `fields`. */
/*= docs/semantics.md#graphql-deny
 *# it has no `fields` or **some** member of *F* matches one of its globs */
static Z3_ast gql_fields_match(struct prover_proof *pf, const struct model_l7rule_view *rv,
                               bool deny)
{
    struct zvec z = {0};
    bool *has;

    if (rv->gql_nfields == 0) {
        return prover_true(pf);
    }
    has = pv_calloc(pf->gfield.natoms ? pf->gfield.natoms : 1, sizeof(bool));
    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < pf->gfield.natoms; a++) {
        for (size_t j = 0; j < rv->gql_nfields && !has[a]; j++) {
            const char *t = model_glob_text(rv->gql_fields[j]);
            size_t pi;

            if (prover_map_get(&pf->gfield.index, t, strlen(t), &pi)) {
                has[a] = prover_atom_has(&pf->gfield, a, pi);
            } else {
                pf->zerr = true;
            }
        }
    }
    for (size_t i = 0; i < pf->nfv; i++) {
        zpush(pf, &z, prover_in_set(pf, pf->fv[i], pf->gfield.natoms, has, 0, true));
    }
    free(has);
    return deny ? zor(pf, &z) : zand(pf, &z);
}

/* A document operation (not hash-only) matches GraphQL rule 'ri'. */
static Z3_ast gql_rule_match(struct prover_proof *pf, const struct model_endpoint *e, bool deny,
                             size_t ri)
{
    struct model_l7rule_view rv;

    if (deny) {
        model_endpoint_deny_rule(e, ri, &rv);
    } else {
        model_endpoint_allow_rule(e, ri, &rv);
    }
    return prover_and(pf, 3,
                      (Z3_ast[]){gql_type_match(pf, rv.gql_types), gql_name_match(pf, &rv),
                                 gql_fields_match(pf, &rv, deny)});
}

static bool rule_is_gql(const struct model_endpoint *e, bool deny, size_t ri)
{
    struct model_l7rule_view rv;

    if (deny) {
        model_endpoint_deny_rule(e, ri, &rv);
    } else {
        model_endpoint_allow_rule(e, ri, &rv);
    }
    return rv.gql_types != 0;
}

/* GraphQL over HTTP admits POST, and GET for queries only. */
static Z3_ast gql_http_method(struct prover_proof *pf, Z3_ast is_query)
{
    return prover_or2(
        pf, prover_eqn(pf, pf->m, prover_method_index(pf, "POST")),
        prover_and2(pf, prover_eqn(pf, pf->m, prover_method_index(pf, "GET")), is_query));
}

/*= docs/semantics.md#graphql-persisted
 *# Under `allow_registered` it is decided exactly as the document operation
 *# *(t, n, F)* of the endpoint's `graphql_persisted_queries` entry keyed *id* */
/* The registry is concrete: for each id atom the evaluator's own matching
 * gives the answer (model_endpoint_gql_persisted_match). */
static Z3_ast gql_persisted(struct prover_proof *pf, const struct prover_unit *u, bool deny,
                            bool http)
{
    struct zvec z = {0};

    for (size_t a = 0; a < pf->npids; a++) {
        bool isq = false;

        if (model_endpoint_gql_persisted_match(u->ep, pf->pids[a], deny, &isq)) {
            Z3_ast k = prover_eqn(pf, pf->pid, a);

            if (http && !deny) {
                k = prover_and2(pf, k,
                                gql_http_method(pf, isq ? prover_true(pf) : prover_false(pf)));
            }
            zpush(pf, &z, k);
        }
    }
    return zor(pf, &z);
}

/* The unit's GraphQL allow (deny = false) or deny rules match the request's
 * operation: a document or a hash-only one. */
static Z3_ast gql_rules(struct prover_proof *pf, const struct prover_unit *u, bool deny, bool http)
{
    struct zvec z = {0};
    size_t n = deny ? u->v.ndeny : u->v.nallow;
    Z3_ast doc;

    for (size_t i = 0; i < n; i++) {
        if (rule_is_gql(u->ep, deny, i)) {
            zpush(pf, &z, gql_rule_match(pf, u->ep, deny, i));
        }
    }
    doc = zor(pf, &z);
    if (!http && !deny) {
        /*= docs/semantics.md#graphql-ws
         *# a request with method `WEBSOCKET_TEXT`, the upgrade's path and its
         *# operation *o* */
        Z3_ast ws = prover_eqn(pf, pf->m, prover_method_index(pf, "WEBSOCKET_TEXT"));

        return prover_and(
            pf, 3,
            (Z3_ast[]){pf->g, ws,
                       prover_or2(pf, prover_and2(pf, prover_not(pf, pf->pq), doc),
                                  prover_and2(pf, pf->pq, gql_persisted(pf, u, deny, http)))});
    }
    if (http && !deny) {
        /*= docs/semantics.md#graphql-http
         *# its method is `POST`, or `GET` with an operation of type `query` */
        doc = prover_and2(pf, doc, gql_http_method(pf, prover_eqn(pf, pf->t, 0)));
    }
    return prover_and2(pf, pf->g,
                       prover_or2(pf, prover_and2(pf, prover_not(pf, pf->pq), doc),
                                  prover_and2(pf, pf->pq, gql_persisted(pf, u, deny, http))));
}

/* The request's persisted id is registered on the unit's endpoint (under
 * allow_registered): the evaluator's gql_resolve() succeeds. */
static Z3_ast ws_registered(struct prover_proof *pf, const struct prover_unit *u)
{
    struct zvec z = {0};
    size_t n = model_endpoint_gql_npersisted(u->ep);

    for (size_t a = 0; a < pf->npids; a++) {
        for (size_t i = 0; i < n; i++) {
            const char *id = model_endpoint_gql_persisted_id(u->ep, i);
            if (id != NULL && strcmp(id, pf->pids[a]) == 0) {
                zpush(pf, &z, prover_eqn(pf, pf->pid, a));
                break;
            }
        }
    }
    return zor(pf, &z);
}

/* Has the unit's endpoint a GraphQL allow rule? */
static bool has_gql_allow(const struct prover_unit *u)
{
    for (size_t i = 0; i < u->v.nallow; i++) {
        if (rule_is_gql(u->ep, false, i)) {
            return true;
        }
    }
    return false;
}

static Z3_ast unit_grants(struct prover_proof *pf, const struct prover_unit *u)
{
    struct zvec z = {0};
    Z3_ast g;

    /*= docs/semantics.md#grant
     *# its endpoint is L4: every request; */
    if (!u->l7) {
        g = prover_true(pf);
    } else if (!u->v.enforce) {
        /*= docs/semantics.md#audit
         *# its endpoint is L7 and not enforced [...] (**audit mode**): every request. */
        g = prover_true(pf);
    } else if (u->v.proto == MODEL_PROTO_REST || u->v.proto == MODEL_PROTO_WEBSOCKET) {
        /*= docs/semantics.md#grant
         *# its endpoint is enforced `rest` or `websocket`: some allow rule matches
         *# (method, path and query, below); */
        for (size_t i = 0; i < u->v.nallow; i++) {
            if (!rule_is_gql(u->ep, false, i)) {
                zpush(pf, &z, rule_match(pf, u->ep, false, i));
            }
        }
        g = zor(pf, &z);
        if (u->v.proto == MODEL_PROTO_WEBSOCKET && has_gql_allow(u)) {
            /*= docs/semantics.md#graphql-ws-rules
             *# On a `websocket` unit with GraphQL allow rules a request with an
             *# operation is granted by those rules only (#graphql-allow), and one
             *# without an operation (the GET upgrade, plain text messages) by its
             *# method rules only. On a `websocket` unit without GraphQL allow rules
             *# every request, an operation message included, is granted by its method
             *# rules */
            g = prover_or2(pf, prover_and2(pf, prover_not(pf, pf->g), g),
                           gql_rules(pf, u, false, false));
        } else if (u->v.proto == MODEL_PROTO_WEBSOCKET) {
            /*= docs/semantics.md#graphql-ws-rules
             *# an operation that its deny rules cannot read (a hash-only one the
             *# registry does not resolve) is denied as in #graphql-persisted */
            g = prover_and2(pf, g,
                            prover_or(pf, 3,
                                      (Z3_ast[]){prover_not(pf, pf->g), prover_not(pf, pf->pq),
                                                 ws_registered(pf, u)}));
        }
    } else if (u->v.proto == MODEL_PROTO_GRAPHQL) {
        /*= docs/semantics.md#grant
         *# its endpoint is enforced `graphql`: the request is a GraphQL operation and
         *# some GraphQL allow rule matches it (#graphql); */
        g = gql_rules(pf, u, false, true);
    } else if (u->v.proto == MODEL_PROTO_JSONRPC || u->v.proto == MODEL_PROTO_MCP) {
        /*= docs/semantics.md#grant
         *# its endpoint is enforced `json-rpc` or `mcp`: the request is one call
         *# and the endpoint's call rules grant it (#rpc); */
        g = prover_rpc_rules(pf, u, false);
    } else {
        /*= docs/semantics.md#unsupported
         *# its endpoint is enforced `sql`: **nothing**. */
        g = prover_false(pf);
    }
    if (!u->v.allow_encoded_slash) {
        /*= docs/semantics.md#encoded-slash
         *# if the canonical path contains an encoded slash `%2F`, only when the
         *# endpoint sets `allow_encoded_slash`. */
        g = prover_and2(pf, g, prover_not(pf, pf->has2f));
    }
    return g;
}

static Z3_ast unit_denies(struct prover_proof *pf, const struct prover_unit *u)
{
    struct zvec z = {0};

    /*= docs/semantics.md#deny-wins
     *# no unit in G with an **enforced** `rest`, `websocket`, `graphql`,
     *# `json-rpc` or `mcp` endpoint has a **deny rule** that matches it ("deny
     *# wins", across all rules */
    /* As the evaluator, only enforced `rest`, `websocket`, `graphql`,
     * `json-rpc` and `mcp` units deny: method deny rules on method, path and
     * query, GraphQL deny rules on the operation (never on a request without
     * one), call deny rules on the call (never on a request without one). */
    if (!u->l7 || !u->v.enforce ||
        (u->v.proto != MODEL_PROTO_REST && u->v.proto != MODEL_PROTO_WEBSOCKET &&
         u->v.proto != MODEL_PROTO_GRAPHQL && !prover_unit_rpc(u))) {
        return prover_false(pf);
    }
    if (prover_unit_rpc(u)) {
        return prover_rpc_rules(pf, u, true);
    }
    for (size_t i = 0; i < u->v.ndeny; i++) {
        if (!rule_is_gql(u->ep, true, i)) {
            zpush(pf, &z, rule_match(pf, u->ep, true, i));
        }
    }
    if (pf->gql) {
        /*= docs/semantics.md#graphql-deny
         *# GraphQL deny rules never match a request without an operation */
        zpush(pf, &z, gql_rules(pf, u, true, false));
    }
    return zor(pf, &z);
}

static Z3_ast unit_admits(struct prover_proof *pf, const struct prover_unit *u)
{
    Z3_ast parts[4];

    /*= docs/semantics.md#always-blocked
     *# *d* is not **always-blocked** */
    parts[0] = prover_not(pf, pf->blocked);
    /*= docs/semantics.md#control-plane
     *# *p* is not a control-plane port (2379, 2380, 6443, 10250, 10255); */
    parts[1] = prover_not(pf, pf->cp);
    /*= docs/semantics.md#dest
     *# if *e* resolves a `target_sandbox` that is not resolved yet, nothing is admitted; */
    parts[2] = u->v.unresolved ? prover_false(pf) : prover_true(pf);
    if (u->v.ncidrs > 0) {
        /*= docs/semantics.md#dest
         *# if *e* has `allowed_ips` (or a resolved `target_sandbox`), *d* lies in one
         *# of them; */
        struct zvec z = {0};

        for (size_t i = 0; i < u->v.ncidrs; i++) {
            zpush(pf, &z, prover_in_cidr(pf, &u->v.cidrs[i]));
        }
        parts[3] = zor(pf, &z);
    } else {
        /*= docs/semantics.md#dest
         *# otherwise *d* is **public**, or *h* is an IP host equal to the endpoint's
         *# own literal host and the endpoint is not `advisor_proposed`. */
        Z3_ast pub = prover_and2(pf, prover_not(pf, pf->blocked), prover_not(pf, pf->private_));
        Z3_ast own = prover_false(pf);

        if (u->v.host != NULL && u->v.host_is_ip && !u->v.advisor_proposed) {
            own = prover_eqn(pf, pf->h, pf->dns.natoms + u->hip);
        }
        parts[3] = prover_or2(pf, pub, own);
    }
    return prover_and(pf, 4, parts);
}

Z3_ast prover_unit_ok(struct prover_proof *pf, size_t ui)
{
    const struct prover_unit *u = &pf->units.u[ui];
    size_t s = (size_t)u->side;
    Z3_ast insp = prover_and(pf, 3, (Z3_ast[]){pf->scope[ui], pf->grants[ui], pf->admits[ui]});

    return prover_and2(pf, pf->g0[ui],
                       prover_z(pf, Z3_mk_ite(pf->ctx, pf->insp[s], insp, pf->admits[ui])));
}

Z3_ast prover_unit_grant(struct prover_proof *pf, size_t ui)
{
    const struct prover_unit *u = &pf->units.u[ui];
    size_t s = (size_t)u->side;
    Z3_ast insp = prover_and2(pf, pf->scope[ui], pf->grants[ui]);

    return prover_and2(pf, pf->g0[ui], prover_or2(pf, prover_not(pf, pf->insp[s]), insp));
}

/* ---------------------------------------------------------------------------
 * The encoding
 * ------------------------------------------------------------------------- */

static pv_result atoms_all(struct prover_proof *pf) PV_WUR;
static pv_result atoms_all(struct prover_proof *pf)
{
    struct prover_lang_memo *memo = pf->s != NULL ? &pf->s->lang : NULL;

    pf->bin.memo = memo;
    pf->dns.memo = memo;
    pf->path.memo = memo;
    pf->bin.deadline = pf->dns.deadline = pf->path.deadline = pf->deadline;
    for (size_t k = 0; k < pf->nqkeys; k++) {
        pf->qkeys[k].dim.memo = memo;
        pf->qkeys[k].dim.deadline = pf->deadline;
    }
    PV_GUARD(prover_dim_atoms(&pf->bin, &pf->lang_budget));
    PV_GUARD(prover_dim_atoms(&pf->dns, &pf->lang_budget));
    PV_GUARD(prover_dim_atoms(&pf->path, &pf->lang_budget));
    for (size_t k = 0; k < pf->nqkeys; k++) {
        PV_GUARD(prover_dim_atoms(&pf->qkeys[k].dim, &pf->lang_budget));
    }
    if (pf->gql) {
        pf->gname.memo = pf->gfield.memo = memo;
        pf->gname.deadline = pf->gfield.deadline = pf->deadline;
        PV_GUARD(prover_dim_atoms(&pf->gname, &pf->lang_budget));
        PV_GUARD(prover_dim_atoms(&pf->gfield, &pf->lang_budget));
        /* A witness needs at most one field per baseline GraphQL allow rule
         * with fields (one it does not cover), one a deny rule matches and
         * one to be non-empty, and never more than one per field atom. */
        pf->nfv += 2;
        if (pf->nfv > pf->gfield.natoms) {
            pf->nfv = pf->gfield.natoms > 0 ? pf->gfield.natoms : 1;
        }
        PV_ENSURE(pf->nfv <= PROVER_GQL_MAX_FIELDS, PV_ERR_LIMIT);
    }
    if (pf->rpc) {
        PV_GUARD(prover_rpc_atoms(pf, memo));
    }
    /* Put the atom holding "/" first: unconstrained paths then read as "/". */
    for (size_t a = 0; a < pf->path.natoms; a++) {
        if (pf->path.atoms[a].wlen == 1 && pf->path.atoms[a].w[0] == '/') {
            struct prover_atom t = pf->path.atoms[0];

            pf->path.atoms[0] = pf->path.atoms[a];
            pf->path.atoms[a] = t;
            break;
        }
    }
    pf->root_atom = 0;
    pf->nhost = pf->dns.natoms + pf->nips + 1;
    PV_ENSURE(pf->nhost <= PROVER_MAX_ATOMS * 2, PV_ERR_LIMIT);
    return PV_RESULT_OK;
}

static pv_result classify(struct prover_proof *pf) PV_WUR;
static pv_result classify(struct prover_proof *pf)
{
    pf->host_cred = pv_calloc(pf->nhost, sizeof(bool));
    pf->host_ll = pv_calloc(pf->nhost, sizeof(bool));
    pf->bin_bypass = pv_calloc(pf->bin.natoms ? pf->bin.natoms : 1, sizeof(bool));
    PV_ENSURE(pf->host_cred != NULL && pf->host_ll != NULL && pf->bin_bypass != NULL, PV_ERR_NOMEM);
    for (size_t a = 0; a < pf->dns.natoms; a++) {
        const struct prover_atom *at = &pf->dns.atoms[a];

        for (size_t t = 0; t < pf->ncredt && !pf->host_cred[a]; t++) {
            if (pf->cred_pats[t] != SIZE_MAX) {
                pf->host_cred[a] = prover_atom_has(&pf->dns, a, pf->cred_pats[t]);
            }
        }
        pf->host_ll[a] = model_host_is_metadata_name(at->w, at->wlen);
    }
    for (size_t i = 0; i < pf->nips; i++) {
        size_t a = pf->dns.natoms + i;

        for (size_t t = 0; t < pf->ncredt && !pf->host_cred[a]; t++) {
            pf->host_cred[a] = pf->cred_ips[t] == i;
        }
        pf->host_ll[a] = pf->ips[i].link_local;
    }
    for (size_t a = 0; a < pf->bin.natoms; a++) {
        for (size_t k = 0; k < pf->nbypass && !pf->bin_bypass[a]; k++) {
            pf->bin_bypass[a] = prover_atom_has(&pf->bin, a, pf->bypass_pats[k]);
        }
    }
    return PV_RESULT_OK;
}

void prover_assert(struct prover_proof *pf, Z3_ast a)
{
    if (a == NULL || pf->zerr) {
        pf->zerr = true;
        return;
    }
    Z3_solver_assert(pf->ctx, pf->solver, a);
    (void)prover_z(pf, a);
}

void prover_bound(struct prover_proof *pf, Z3_ast var, size_t n, unsigned width)
{
    if (((size_t)1 << width) > n) {
        Z3_sort s = Z3_mk_bv_sort(pf->ctx, width);

        prover_assert(pf,
                      prover_z(pf, Z3_mk_bvult(pf->ctx, var, Z3_mk_unsigned_int64(pf->ctx, n, s))));
    }
}

Z3_ast prover_mk_bool(struct prover_proof *pf, const char *name)
{
    Z3_context c = pf->ctx;

    return prover_z(pf, Z3_mk_const(c, Z3_mk_string_symbol(c, name), Z3_mk_bool_sort(c)));
}

/* The GraphQL dimensions; without a unit that decides operations the
 * request carries none (g is false), as every request of a REST slice. */
static void gql_variables(struct prover_proof *pf)
{
    if (!pf->gql) {
        pf->g = pf->pq = pf->anon = prover_false(pf);
        return;
    }
    pf->g = prover_mk_bool(pf, "g");
    pf->pq = prover_mk_bool(pf, "pq");
    pf->anon = prover_mk_bool(pf, "anon");
    pf->t = prover_mk_var(pf, "t", 2);
    prover_bound(pf, pf->t, 3, 2);
    pf->pidwidth = prover_width_for(pf->npids + 1);
    pf->pid = prover_mk_var(pf, "pid", pf->pidwidth);
    prover_bound(pf, pf->pid, pf->npids + 1, pf->pidwidth);
    pf->gname.width = prover_width_for(pf->gname.natoms);
    pf->gname.var = prover_mk_var(pf, "n", pf->gname.width);
    prover_bound(pf, pf->gname.var, pf->gname.natoms, pf->gname.width);
    pf->gfield.width = prover_width_for(pf->gfield.natoms);
    pf->fv = pv_calloc(pf->nfv ? pf->nfv : 1, sizeof(Z3_ast));
    if (pf->fv == NULL) {
        pf->zerr = pf->znomem = true;
        return;
    }
    for (size_t i = 0; i < pf->nfv; i++) {
        char nm[32];

        (void)snprintf(nm, sizeof(nm), "f%zu", i);
        pf->fv[i] = prover_mk_var(pf, nm, pf->gfield.width);
        prover_bound(pf, pf->fv[i], pf->gfield.natoms, pf->gfield.width);
    }
    pf->gfield.var = pf->fv[0];
}

static void variables(struct prover_proof *pf)
{
    Z3_context c = pf->ctx;
    struct zvec others = {0};

    pf->bin.width = prover_width_for(pf->bin.natoms);
    pf->bin.var = prover_mk_var(pf, "x", pf->bin.width);
    pf->hwidth = prover_width_for(pf->nhost);
    pf->h = prover_mk_var(pf, "h", pf->hwidth);
    pf->dns.var = pf->h;
    pf->path.width = prover_width_for(pf->path.natoms);
    pf->path.var = prover_mk_var(pf, "u", pf->path.width);
    pf->mwidth = prover_width_for(pf->nmethods);
    pf->m = prover_mk_var(pf, "m", pf->mwidth);
    pf->pwidth = prover_width_for(pf->nports);
    pf->p = prover_mk_var(pf, "p", pf->pwidth);
    pf->dwidth = prover_width_for(pf->ndatoms);
    pf->d = prover_mk_var(pf, "d", pf->dwidth);
    prover_bound(pf, pf->bin.var, pf->bin.natoms, pf->bin.width);
    prover_bound(pf, pf->h, pf->nhost, pf->hwidth);
    prover_bound(pf, pf->path.var, pf->path.natoms, pf->path.width);
    prover_bound(pf, pf->m, pf->nmethods, pf->mwidth);
    prover_bound(pf, pf->p, pf->nports, pf->pwidth);
    prover_bound(pf, pf->d, pf->ndatoms, pf->dwidth);
    gql_variables(pf);
    prover_rpc_variables(pf);
    /* An IP host is its own destination. */
    for (size_t i = 0; i < pf->nips; i++) {
        Z3_ast deq = prover_eqn(pf, pf->d, pf->ips[i].datom);

        prover_assert(pf, prover_implies(pf, prover_eqn(pf, pf->h, pf->dns.natoms + i), deq));
        zpush(pf, &others, deq);
    }
    prover_assert(pf, prover_implies(pf, prover_eqn(pf, pf->h, pf->nhost - 1),
                                     prover_not(pf, zor(pf, &others))));
    for (size_t k = 0; k < pf->nqkeys; k++) {
        struct prover_qkey *qk = &pf->qkeys[k];
        struct zvec z = {0};

        qk->present = pv_calloc(qk->dim.natoms ? qk->dim.natoms : 1, sizeof(Z3_ast));
        if (qk->present == NULL) {
            pf->zerr = pf->znomem = true;
            return;
        }
        for (size_t a = 0; a < qk->dim.natoms; a++) {
            char buf[64];

            (void)snprintf(buf, sizeof(buf), "q%zu_%zu", k, a);
            qk->present[a] =
                prover_z(pf, Z3_mk_const(c, Z3_mk_string_symbol(c, buf), Z3_mk_bool_sort(c)));
            zpush(pf, &z, qk->present[a]);
        }
        qk->has = zor(pf, &z);
    }
}

static Z3_ast d_class(struct prover_proof *pf, enum model_ip_class cls)
{
    bool *has = pv_calloc(pf->ndatoms, sizeof(bool));
    Z3_ast r;

    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < pf->ndatoms; a++) {
        switch (cls) {
        case MODEL_IPC_BLOCKED:
            has[a] = pf->datoms[a].blocked;
            break;
        case MODEL_IPC_PRIVATE:
            has[a] = pf->datoms[a].priv;
            break;
        case MODEL_IPC_LINK_LOCAL:
            has[a] = pf->datoms[a].ll;
            break;
        }
    }
    r = prover_in_set(pf, pf->d, pf->ndatoms, has, 0, true);
    free(has);
    return r;
}

static void globals(struct prover_proof *pf)
{
    struct zvec z = {0};

    /*= docs/semantics.md#always-blocked
     *# *d* is not **always-blocked**: loopback (127/8, ::1), link-local */
    pf->blocked = d_class(pf, MODEL_IPC_BLOCKED);
    /*= docs/semantics.md#private
     *# **Private** addresses are the internal ranges that are not always-blocked */
    pf->private_ = d_class(pf, MODEL_IPC_PRIVATE);
    for (size_t i = 0; i < pf->nports; i++) {
        if (model_port_is_control_plane(pf->ports[i])) {
            zpush(pf, &z, prover_eqn(pf, pf->p, i));
        }
    }
    pf->cp = zor(pf, &z);
    pf->hostdns =
        pf->dns.natoms == 0
            ? prover_false(pf)
            : prover_z(pf, Z3_mk_bvult(pf->ctx, pf->h,
                                       Z3_mk_unsigned_int64(pf->ctx, pf->dns.natoms,
                                                            Z3_mk_bv_sort(pf->ctx, pf->hwidth))));
    pf->cred = prover_in_set(pf, pf->h, pf->nhost, pf->host_cred, 0, true);
    /*= docs/semantics.md#link-local
     *# A host is **link-local** when it is an IP host in a link-local range
     *# (any of the forms above) or a known metadata host name */
    /* The "other IP host" atom stands for every IP host that is no literal of
     * the slice; its address is its destination, so it is link-local exactly
     * when the destination atom is. */
    pf->ll = prover_or2(
        pf, prover_in_set(pf, pf->h, pf->nhost, pf->host_ll, 0, true),
        prover_and2(pf, prover_eqn(pf, pf->h, pf->nhost - 1), d_class(pf, MODEL_IPC_LINK_LOCAL)));
    pf->bypass = prover_in_set(pf, pf->bin.var, pf->bin.natoms, pf->bin_bypass, 0, true);
    pf->has2f = prover_memb(pf, &pf->path, pf->path_2f);
}

static Z3_ast port_match(struct prover_proof *pf, const struct prover_unit *u)
{
    struct zvec z = {0};

    for (size_t i = 0; i < u->v.nports; i++) {
        zpush(pf, &z, prover_port_eq(pf, u->v.ports[i]));
    }
    return zor(pf, &z);
}

/* A Boolean constant asserted equal to 't' (constants stay as they are). */
static Z3_ast define(struct prover_proof *pf, const char *name, Z3_ast t)
{
    Z3_context c = pf->ctx;
    Z3_ast k;

    if (t == NULL) {
        pf->zerr = true;
        return NULL;
    }
    if (Z3_is_eq_ast(c, t, Z3_mk_true(c)) || Z3_is_eq_ast(c, t, Z3_mk_false(c))) {
        return t;
    }
    k = prover_z(pf, Z3_mk_const(c, Z3_mk_string_symbol(c, name), Z3_mk_bool_sort(c)));
    if (k != NULL) {
        prover_assert(pf, prover_z(pf, Z3_mk_eq(c, k, t)));
    }
    return k;
}

/* long: the per-unit terms (G0, scope, grants, admits) of both sides, then the shared names; the
 * loops share the arrays they fill */
static pv_result per_unit(struct prover_proof *pf) PV_WUR;
static pv_result per_unit(struct prover_proof *pf)
{
    size_t n = pf->units.n ? pf->units.n : 1;
    struct zvec ins[2] = {{0}, {0}};
    struct zvec any[2] = {{0}, {0}};
    struct zvec gr[2] = {{0}, {0}};
    struct zvec okv[2] = {{0}, {0}};
    struct zvec den[2] = {{0}, {0}};
    struct zvec gany[2] = {{0}, {0}};
    struct zvec rch[2] = {{0}, {0}};
    struct zvec reg = {0};

    pf->g0 = pv_calloc(n, sizeof(Z3_ast));
    pf->scope = pv_calloc(n, sizeof(Z3_ast));
    pf->grants = pv_calloc(n, sizeof(Z3_ast));
    pf->admits = pv_calloc(n, sizeof(Z3_ast));
    pf->denies = pv_calloc(n, sizeof(Z3_ast));
    PV_ENSURE(pf->g0 != NULL && pf->scope != NULL && pf->grants != NULL && pf->admits != NULL &&
                  pf->denies != NULL,
              PV_ERR_NOMEM);
    for (size_t i = 0; i < pf->units.n; i++) {
        struct prover_unit *u = &pf->units.u[i];
        size_t s = (size_t)u->side;
        Z3_ast g, sc;

        if (!u->rel) {
            continue;
        }
        /*= docs/semantics.md#routes
         *# **G₀** is the set of units whose binary pattern matches *x*,
         *# whose host pattern matches *h* (or is hostless) and whose ports contain *p*. */
        pf->g0[i] = prover_and(pf, 3,
                               (Z3_ast[]){prover_memb(pf, &pf->bin, u->bpat),
                                          prover_host_memb(pf, u), port_match(pf, u)});
        /*= docs/semantics.md#routes
         *# **G** ⊆ G₀ keeps the units whose endpoint `path` scope (if any) matches the
         *# canonical path *u*. */
        pf->scope[i] = u->spat == SIZE_MAX ? prover_true(pf) : prover_memb(pf, &pf->path, u->spat);
        pf->grants[i] = unit_grants(pf, u);
        pf->admits[i] = unit_admits(pf, u);
        pf->denies[i] = unit_denies(pf, u);
        g = pf->g0[i];
        sc = prover_and2(pf, g, pf->scope[i]);
        if (u->l7) {
            zpush(pf, &ins[s], g);
        }
        zpush(pf, &any[s], prover_and2(pf, g, pf->admits[i]));
        zpush(pf, &gany[s], g);
        zpush(pf, &okv[s], prover_and(pf, 3, (Z3_ast[]){sc, pf->grants[i], pf->admits[i]}));
        zpush(pf, &gr[s], prover_and2(pf, sc, pf->grants[i]));
        zpush(pf, &den[s], prover_and2(pf, sc, pf->denies[i]));
        /*= docs/semantics.md#reach
         *# A connection (CONNECT, or the first hop of a forward request) to (h, p) by *x*
         *# is allowed iff G₀ is non-empty and some unit of G₀ admits the destination */
        zpush(pf, &rch[s],
              prover_and(pf, 4,
                         (Z3_ast[]){g, prover_not(pf, pf->cp),
                                    u->v.unresolved ? prover_false(pf) : prover_true(pf),
                                    prover_or2(pf, pf->hostdns, pf->admits[i])}));
        if (u->delta) {
            zpush(pf, &reg, g);
        }
    }
    for (int s = 0; s < 2; s++) {
        Z3_ast opaque, inspected, deny, gopq, ginsp;

        /*= docs/semantics.md#route
         *# *inspected* when some unit of G₀ has an L7 endpoint */
        pf->insp[s] = zor(pf, &ins[s]);
        /*= docs/semantics.md#route
         *# *opaque* otherwise: the connection is allowed as a whole and its bytes are
         *# not inspected — an opaque route reaches every method, path and query. */
        opaque = prover_and2(pf, prover_not(pf, pf->insp[s]), zor(pf, &any[s]));
        deny = zor(pf, &den[s]);
        /*= docs/semantics.md#l7
         *# some unit *e* in G **grants** it and admits the destination *d*, and */
        inspected =
            prover_and(pf, 3, (Z3_ast[]){pf->insp[s], zor(pf, &okv[s]), prover_not(pf, deny)});
        pf->allow[s] = prover_or2(pf, opaque, inspected);
        pf->allow_raw[s] = pf->allow[s];
        gopq = prover_and2(pf, prover_not(pf, pf->insp[s]), zor(pf, &gany[s]));
        ginsp = prover_and(pf, 3, (Z3_ast[]){pf->insp[s], zor(pf, &gr[s]), prover_not(pf, deny)});
        pf->grant[s] = prover_or2(pf, gopq, ginsp);
        pf->reach[s] = zor(pf, &rch[s]);
    }
    pf->region = zor(pf, &reg);
    /* Name the big shared terms once at the base level: every question
     * refers to the names, so Z3 internalises each definition once per
     * proof instead of once per push/pop. */
    pf->region = define(pf, "region", pf->region);
    for (int s = 0; s < 2; s++) {
        static const char *const sn[2] = {"B", "C"};
        char nm[32];

        (void)snprintf(nm, sizeof(nm), "insp%s", sn[s]);
        pf->insp[s] = define(pf, nm, pf->insp[s]);
        (void)snprintf(nm, sizeof(nm), "allow%s", sn[s]);
        pf->allow[s] = define(pf, nm, pf->allow[s]);
        (void)snprintf(nm, sizeof(nm), "grant%s", sn[s]);
        pf->grant[s] = define(pf, nm, pf->grant[s]);
        (void)snprintf(nm, sizeof(nm), "reach%s", sn[s]);
        pf->reach[s] = define(pf, nm, pf->reach[s]);
    }
    PV_ENSURE(!pf->zerr, pf->znomem ? PV_ERR_NOMEM : PV_ERR_SOLVER);
    return PV_RESULT_OK;
}

pv_result prover_encode_atoms(struct prover_proof *pf)
{
    prover_dim_init(&pf->bin, MODEL_DOMAIN_ABS_PATH);
    prover_dim_init(&pf->dns, MODEL_DOMAIN_DNS_NAME);
    prover_dim_init(&pf->path, MODEL_DOMAIN_CANONICAL_PATH);
    prover_dim_init(&pf->gname, MODEL_DOMAIN_GQL_NAME);
    prover_dim_init(&pf->gfield, MODEL_DOMAIN_GQL_NAME);
    prover_dim_init(&pf->rmeth, MODEL_DOMAIN_QUERY_VALUE);
    prover_dim_init(&pf->rtool, MODEL_DOMAIN_QUERY_VALUE);
    PV_GUARD(prover_collect(pf));
    PV_GUARD(atoms_all(pf));
    return classify(pf);
}

pv_result prover_encode_terms(struct prover_proof *pf)
{
    if (pf->datoms == NULL) { /* not built yet by the concrete candidates */
        PV_GUARD(prover_dest_atoms(pf));
    }
    PV_GUARD(prover_port_atoms(pf));
    pf->solver = pf->s->solver;
    PV_ENSURE(pf->solver != NULL, PV_ERR_SOLVER);
    Z3_solver_push(pf->ctx, pf->solver);
    PV_GUARD(prover_z3_ok(pf->ctx));
    {
        /* Z3 honours the timeout to about 10 ms; the deadline check before
         * every query bounds the whole proof. */
        double left = pf->deadline - prover_now_ms();
        Z3_params prm = Z3_mk_params(pf->ctx);

        Z3_params_inc_ref(pf->ctx, prm);
        Z3_params_set_uint(pf->ctx, prm, Z3_mk_string_symbol(pf->ctx, "timeout"),
                           left < 1.0 ? 1u : (unsigned)left);
        Z3_solver_set_params(pf->ctx, pf->solver, prm);
        Z3_params_dec_ref(pf->ctx, prm);
        PV_GUARD(prover_z3_ok(pf->ctx));
    }
    variables(pf);
    globals(pf);
    PV_ENSURE(!pf->zerr, pf->znomem ? PV_ERR_NOMEM : PV_ERR_SOLVER);
    return per_unit(pf);
}
