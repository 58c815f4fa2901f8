/* SPDX-License-Identifier: Apache-2.0 */
/* prover_rpc.c - JSON-RPC and MCP calls as Z3 terms
 *
 * A request on an inspected route may carry one call (docs/semantics.md#rpc):
 * whether it does (rc), its kind (rk), its method (an atom of the call
 * method dimension) and its tool (an atom of the tool dimension, or none).
 * The dimensions are collected in prover_dims.c; this file declares the
 * variables, the calls the reader can produce, and what the call rules of
 * an enforced json-rpc or mcp unit grant and deny - exactly as the
 * evaluator's model_eval_rpc.c, fail-closed branches included
 * (docs/internals/prover.md#rpc).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

/* Every predicate below is constant on each atom of its dimension: the
 * method dimension holds every method glob of the slice, every exact
 * json-rpc method and every profile method as a pattern, and the tool
 * dimension every tool glob, so testing the atom's witness decides the
 * whole atom (prover_dims.c, collect_rpc). */
enum rpc_pred { RP_EXACT, RP_GLOB, RP_PROFILE };

static bool rpc_pred_holds(enum rpc_pred k, const char *w, size_t wlen, const char *m,
                           const struct model_glob *g, bool narrowed)
{
    switch (k) {
    case RP_EXACT:
        return strlen(m) == wlen && memcmp(m, w, wlen) == 0;
    case RP_GLOB:
        return model_glob_match(g, w, wlen);
    case RP_PROFILE:
        /*= docs/semantics.md#rpc-profile
         *# With `allow_all_known_mcp_methods: true` an `mcp` endpoint grants
         *# every call whose method is in the profile, except `tools/call` when
         *# some allow rule of the endpoint has a tool selector */
        return model_rpc_mcp_known(w) && !(narrowed && strcmp(w, "tools/call") == 0);
    }
    return false;
}

/* The call's method lies in an atom where predicate 'k' holds. */
static Z3_ast rpc_meth(struct prover_proof *pf, enum rpc_pred k, const char *m,
                       const struct model_glob *g, bool narrowed)
{
    struct prover_dim *d = &pf->rmeth;
    bool *has = pv_calloc(d->natoms ? d->natoms : 1, sizeof(bool));
    Z3_ast r;

    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < d->natoms; a++) {
        has[a] = rpc_pred_holds(k, d->atoms[a].w, d->atoms[a].wlen, m, g, narrowed);
    }
    r = prover_in_set(pf, d->var, d->natoms, has, 0, true);
    free(has);
    return r;
}

/* The call has a tool, and it matches one of the rule's tool globs. */
static Z3_ast rpc_tool(struct prover_proof *pf, const struct model_l7rule_view *rv)
{
    struct prover_dim *d = &pf->rtool;
    bool *has = pv_calloc(d->natoms ? d->natoms : 1, sizeof(bool));
    Z3_ast r;

    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < d->natoms; a++) {
        for (size_t j = 0; j < rv->rpc_ntools && !has[a]; j++) {
            has[a] = rv->rpc_tools[j] != NULL &&
                     model_glob_match(rv->rpc_tools[j], d->atoms[a].w, d->atoms[a].wlen);
        }
    }
    /* not closed: the value natoms is "no tool" */
    r = prover_in_set(pf, d->var, d->natoms, has, 0, false);
    free(has);
    return r;
}

/*= docs/semantics.md#rpc-rules
 *# A rule matches a call when its method matches and, if it has a tool
 *# selector, the call's tool matches one of its patterns */
static Z3_ast rpc_rule_match(struct prover_proof *pf, const struct prover_unit *u, bool deny,
                             size_t ri)
{
    struct model_l7rule_view rv;
    bool mcp = u->v.proto == MODEL_PROTO_MCP;
    const char *m;
    Z3_ast mt;

    if (deny) {
        model_endpoint_deny_rule(u->ep, ri, &rv);
    } else {
        model_endpoint_allow_rule(u->ep, ri, &rv);
    }
    m = rv.method;
    if ((m == NULL || m[0] == '\0') && rv.rpc_ntools == 0) {
        /*= docs/semantics.md#rpc-rules
         *# A rule with neither: an allow rule on an `mcp` endpoint whose
         *# method profile is on matches every method of the profile (as
         *# #rpc-profile, `tools/call` excepted when tools are narrowed), any
         *# other allow rule matches nothing, and a deny rule matches every
         *# call. */
        if (deny) {
            return prover_true(pf);
        }
        return mcp && u->v.mcp_profile
                   ? rpc_meth(pf, RP_PROFILE, NULL, NULL, u->v.rpc_tool_narrowed)
                   : prover_false(pf);
    }
    if (m == NULL || m[0] == '\0') {
        /*= docs/semantics.md#rpc-rules
         *# A rule without `method` but with a tool selector means `tools/call`. */
        mt = rpc_meth(pf, RP_EXACT, "tools/call", NULL, false);
    } else if (!mcp) {
        /*= docs/semantics.md#rpc-rules
         *# On `json-rpc` a method is `*` (every call) or one exact name. */
        mt = strcmp(m, "*") == 0 ? prover_true(pf) : rpc_meth(pf, RP_EXACT, m, NULL, false);
    } else if (rv.rpc_method_glob != NULL) {
        /*= docs/semantics.md#rpc-rules
         *# Method and tool patterns of `mcp` rules are globs of the query dialect */
        mt = rpc_meth(pf, RP_GLOB, NULL, rv.rpc_method_glob, false);
    } else {
        return deny ? prover_true(pf) : prover_false(pf); /* not compiled: fail closed */
    }
    if (rv.rpc_ntools == 0) {
        return mt;
    }
    if (rv.rpc_tools == NULL) {
        return deny ? mt : prover_false(pf); /* not compiled: fail closed */
    }
    return prover_and2(pf, mt, rpc_tool(pf, &rv));
}

/* The kind's HTTP method. */
/*= docs/semantics.md#rpc
 *# A request, a notification and a response travel in a `POST`; `rpc.stream`
 *# is a `GET` and `rpc.end` a `DELETE` */
static Z3_ast rpc_kind_fits(struct prover_proof *pf, bool mcp)
{
    Z3_ast post = prover_eqn(pf, pf->m, prover_method_index(pf, "POST"));
    Z3_ast msg = prover_or2(pf, prover_eqn(pf, pf->rk, MODEL_RPC_REQUEST),
                            prover_eqn(pf, pf->rk, MODEL_RPC_NOTIFICATION));

    if (!mcp) {
        return prover_and2(pf, msg, post);
    }
    return prover_or(
        pf, 3,
        (Z3_ast[]){
            prover_and2(pf, prover_or2(pf, msg, prover_eqn(pf, pf->rk, MODEL_RPC_RESPONSE)), post),
            prover_and2(pf, prover_eqn(pf, pf->rk, MODEL_RPC_STREAM),
                        prover_eqn(pf, pf->m, prover_method_index(pf, "GET"))),
            prover_and2(pf, prover_eqn(pf, pf->rk, MODEL_RPC_END),
                        prover_eqn(pf, pf->m, prover_method_index(pf, "DELETE")))});
}

Z3_ast prover_rpc_rules(struct prover_proof *pf, const struct prover_unit *u, bool deny)
{
    bool mcp = u->v.proto == MODEL_PROTO_MCP;
    size_t n = deny ? u->v.ndeny : u->v.nallow;
    Z3_ast *v = pv_calloc(n + 1, sizeof(Z3_ast));
    size_t k = 0;
    Z3_ast any;

    if (v == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    if (!deny && mcp && u->v.mcp_profile) {
        v[k++] = rpc_meth(pf, RP_PROFILE, NULL, NULL, u->v.rpc_tool_narrowed);
    }
    for (size_t i = 0; i < n; i++) {
        v[k++] = rpc_rule_match(pf, u, deny, i);
    }
    any = prover_or(pf, k, v);
    free(v);
    if (deny) {
        /*= docs/semantics.md#rpc-deny
         *# A deny rule of a `json-rpc` or `mcp` endpoint matches a call as an
         *# allow rule would; it never matches a request without a call. */
        return prover_and2(pf, pf->rc, any);
    }
    /*= docs/semantics.md#rpc
     *# A request on a `json-rpc` or `mcp` unit without a call is not granted
     *# (`rpc_no_call`) */
    return prover_and(pf, 3, (Z3_ast[]){pf->rc, rpc_kind_fits(pf, mcp), any});
}

/* The index of the atom of the method dimension that holds exactly 'm' (a
 * literal pattern of the dimension), or SIZE_MAX. */
static size_t rmeth_atom(const struct prover_proof *pf, const char *m)
{
    size_t n = strlen(m);

    for (size_t a = 0; a < pf->rmeth.natoms; a++) {
        if (pf->rmeth.atoms[a].wlen == n && memcmp(pf->rmeth.atoms[a].w, m, n) == 0) {
            return a;
        }
    }
    return SIZE_MAX;
}

void prover_rpc_variables(struct prover_proof *pf)
{
    static const struct {
        enum model_rpc_kind k;
        const char *m;
    } reserved[] = {{MODEL_RPC_RESPONSE, MODEL_RPC_M_RESPONSE},
                    {MODEL_RPC_STREAM, MODEL_RPC_M_STREAM},
                    {MODEL_RPC_END, MODEL_RPC_M_END}};
    Z3_ast msg, notool;
    size_t rpcdot;

    if (!pf->rpc) {
        pf->rc = prover_false(pf);
        return;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(reserved); i++) {
        pf->zerr = pf->zerr || rmeth_atom(pf, reserved[i].m) == SIZE_MAX;
    }
    pf->zerr = pf->zerr || rmeth_atom(pf, "tools/call") == SIZE_MAX;
    pf->rc = prover_mk_bool(pf, "rc");
    pf->rk = prover_mk_var(pf, "rk", 3);
    prover_bound(pf, pf->rk, 5, 3);
    pf->rmeth.width = prover_width_for(pf->rmeth.natoms);
    pf->rmeth.var = prover_mk_var(pf, "rm", pf->rmeth.width);
    prover_bound(pf, pf->rmeth.var, pf->rmeth.natoms, pf->rmeth.width);
    pf->rtool.width = prover_width_for(pf->rtool.natoms + 1);
    pf->rtool.var = prover_mk_var(pf, "rt", pf->rtool.width);
    prover_bound(pf, pf->rtool.var, pf->rtool.natoms + 1, pf->rtool.width);
    if (pf->gql) {
        prover_assert(pf, prover_not(pf, prover_and2(pf, pf->g, pf->rc)));
    }
    msg = prover_or2(pf, prover_eqn(pf, pf->rk, MODEL_RPC_REQUEST),
                     prover_eqn(pf, pf->rk, MODEL_RPC_NOTIFICATION));
    notool = prover_eqn(pf, pf->rtool.var, pf->rtool.natoms);
    prover_assert(
        pf, prover_implies(
                pf, prover_not(pf, notool),
                prover_and2(pf, msg, prover_eqn(pf, pf->rmeth.var, rmeth_atom(pf, "tools/call")))));
    if (!pf->rpc_json) {
        /*= docs/semantics.md#rpc-read
         *# On `mcp`, a `tools/call` - a request or a notification alike - names
         *# its tool in `params.name`, a string; without one it is refused */
        prover_assert(pf, prover_implies(pf,
                                         prover_and2(pf, msg,
                                                     prover_eqn(pf, pf->rmeth.var,
                                                                rmeth_atom(pf, "tools/call"))),
                                         prover_not(pf, notool)));
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(reserved); i++) {
        prover_assert(pf, prover_z(pf, Z3_mk_eq(pf->ctx, prover_eqn(pf, pf->rk, reserved[i].k),
                                                prover_eqn(pf, pf->rmeth.var,
                                                           rmeth_atom(pf, reserved[i].m)))));
    }
    if (prover_map_get(&pf->rmeth.index, "rpc.*", 5, &rpcdot)) {
        prover_assert(pf,
                      prover_implies(pf, msg, prover_not(pf, prover_memb(pf, &pf->rmeth, rpcdot))));
    } else {
        pf->zerr = true;
    }
}

pv_result prover_rpc_atoms(struct prover_proof *pf, struct prover_lang_memo *memo)
{
    pf->rmeth.memo = pf->rtool.memo = memo;
    pf->rmeth.deadline = pf->rtool.deadline = pf->deadline;
    PV_GUARD(prover_dim_atoms(&pf->rmeth, &pf->lang_budget));
    PV_GUARD(prover_dim_atoms(&pf->rtool, &pf->lang_budget));
    PV_ENSURE(pf->rmeth.natoms <= PROVER_RPC_MAX_METHODS, PV_ERR_LIMIT);
    pf->rkeys = pv_calloc(pf->rmeth.natoms ? pf->rmeth.natoms : 1, sizeof(char *));
    PV_GUARD_PTR(pf->rkeys);
    for (size_t a = 0; a < pf->rmeth.natoms; a++) {
        size_t n = pf->rmeth.atoms[a].wlen;

        pf->rkeys[a] = pv_malloc(n + 5);
        PV_GUARD_PTR(pf->rkeys[a]);
        memcpy(pf->rkeys[a], "rpc:", 4);
        memcpy(pf->rkeys[a] + 4, pf->rmeth.atoms[a].w, n);
        pf->rkeys[a][n + 4] = '\0';
    }
    return PV_RESULT_OK;
}
