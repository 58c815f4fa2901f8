/* SPDX-License-Identifier: Apache-2.0 */
/* prover_query.c - one proof: slice, encode, ask the category questions
 *
 * prover_run() is the coordinator: units and delta (prover_units.c), an
 * empty delta answers EMPTY without a solver; otherwise the slice is encoded
 * (prover_encode.c) and each candidate unit of the slice is asked, per port,
 * the question of each category (docs/semantics.md#findings). Each SAT answer
 * yields a witness request, which is re-checked with the concrete evaluator
 * (model_decide) before it is reported: a failed re-check is an internal
 * error and makes the verdict UNKNOWN, never a silent drop. UNSAT for every
 * question is a proof of EMPTY; any UNDEF (timeout) is UNKNOWN.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "prover/prover_int.h"
#include "prover/prover_query_int.h"

static const char example_public_ip[] = PROVER_PLACEHOLDER_IP;

/* ---------------------------------------------------------------------------
 * Solving
 * ------------------------------------------------------------------------- */

/* Each question is asserted once as "guard -> question" and checked under
 * the assumption "guard": nothing is popped, so Z3 internalises the shared
 * definitions once per proof and every question reuses them. */
static void guard_assert(struct prover_proof *pf, Z3_ast g, Z3_ast q)
{
    Z3_ast imp = prover_implies(pf, g, q);

    if (imp != NULL) {
        Z3_solver_assert(pf->ctx, pf->solver, imp);
        (void)prover_z(pf, g);
    }
}

static Z3_ast guard_new(struct prover_proof *pf, Z3_ast q)
{
    char nm[32];
    Z3_ast g;

    if (q == NULL) {
        pf->zerr = true;
        return NULL;
    }
    (void)snprintf(nm, sizeof(nm), "guard%zu", pf->nguards++);
    g = prover_z(pf,
                 Z3_mk_const(pf->ctx, Z3_mk_string_symbol(pf->ctx, nm), Z3_mk_bool_sort(pf->ctx)));
    if (g != NULL) {
        guard_assert(pf, g, q);
    }
    return g;
}

static void guard_add(struct prover_proof *pf, Z3_ast g, Z3_ast q)
{
    if (g == NULL || q == NULL) {
        pf->zerr = true;
        return;
    }
    guard_assert(pf, g, q);
}

static pv_result check_n(struct prover_proof *pf, unsigned n, Z3_ast *g, Z3_lbool *out) PV_WUR;
static pv_result check(struct prover_proof *pf, Z3_ast g, Z3_lbool *out) PV_WUR;
static pv_result check(struct prover_proof *pf, Z3_ast g, Z3_lbool *out)
{
    return check_n(pf, 1, &g, out);
}

static pv_result check_n(struct prover_proof *pf, unsigned n, Z3_ast *g, Z3_lbool *out)
{
    double left = pf->deadline - prover_now_ms();

    PV_ENSURE(!pf->zerr && g[0] != NULL && g[n - 1] != NULL,
              pf->znomem ? PV_ERR_NOMEM : PV_ERR_SOLVER);
    PV_ENSURE(left > 0, PV_ERR_TIMEOUT);
    pf->nqueries++;
    *out = Z3_solver_check_assumptions(pf->ctx, pf->solver, n, g);
    PV_GUARD(prover_z3_ok(pf->ctx));
    if (*out == Z3_L_UNDEF) {
        const char *why = Z3_solver_get_reason_unknown(pf->ctx, pf->solver);

        pv_log_debug("prover: solver unknown: %s", why != NULL ? why : "?");
        PV_BAIL(prover_now_ms() >= pf->deadline || (why != NULL && strstr(why, "timeout"))
                    ? PV_ERR_TIMEOUT
                    : PV_ERR_SOLVER);
    }
    return PV_RESULT_OK;
}

/* Re-check witness 'w' for 'cat' through unit 'ui' and, when it holds and
 * its key has no path yet, record the path. A DNS host's destination is
 * shown as the readable public placeholder when that shows the same.
 * '*ok' tells whether the re-check held; nothing is recorded when not. */
pv_result prover_q_wit_record(struct prover_proof *pf, enum prover_category cat, size_t ui,
                              struct wit *w, bool *ok)
{
    struct model_decision dc;

    *ok = prover_q_recheck(pf, cat, w, &dc);
    if (!*ok) {
        return PV_RESULT_OK;
    }
    if (!w->host_is_ip && !model_ip_is_private(&w->d)) {
        /* Prefer a readable public address when it shows the same. */
        struct wit w2 = *w;
        struct model_decision dc2;

        if (model_ip_parse_strict(example_public_ip, strlen(example_public_ip), &w2.d) &&
            prover_q_recheck(pf, cat, &w2, &dc2)) {
            w->d = w2.d;
            dc = dc2;
        }
    }
    if (prover_q_path_find(pf->res, pf->path_base, cat, pf->units.u[ui].bin,
                           prover_q_host_text(&pf->units.u[ui]), w->port,
                           cat == PROVER_CAT_CAPABILITY
                               ? prover_q_key_text(pf, prover_q_wit_key(pf, w, ui))
                               : NULL) == NULL) {
        return prover_q_path_add(pf, cat, ui, w, &dc);
    }
    return PV_RESULT_OK;
}

/* Are the shortcuts on (see derive_keys and any_model)? Only where a key
 * is a method: GraphQL slices keep one check per question. */
bool prover_q_shortcuts(const struct prover_proof *pf)
{
    return !pf->s->full_smt && !pf->gql && !pf->rpc && pf->in->mode != PROVER_CHECK;
}

/* capability_expansion keys read off one model. 'mdl' satisfies the
 * capability question through unit 'ui' with the method of 'w'; 'qraw' is
 * that question written over the terms themselves (allow_raw: Allow_B and
 * Allow_C depend on the method, and their names keep the model's values).
 * Every other name in 'qraw' (route, reach, region, guards) is a function
 * of binary, host and port only. So when qraw[m := k] holds in 'mdl', the
 * model with m = k (and the Allow names re-evaluated) satisfies the
 * question for key k: k is SAT, exactly as a solver check would find it.
 * Each such key whose witness (the same request with method k) passes the
 * re-check is recorded; a key that does not hold here is left to the
 * solver. */
static pv_result derive_keys(struct prover_proof *pf, Z3_model mdl, size_t ui, const struct wit *w,
                             Z3_ast qraw) PV_WUR;
static pv_result derive_keys(struct prover_proof *pf, Z3_model mdl, size_t ui, const struct wit *w,
                             Z3_ast qraw)
{
    const struct prover_unit *u = &pf->units.u[ui];
    Z3_sort ms;

    if (qraw == NULL) {
        return PV_RESULT_OK;
    }
    ms = Z3_get_sort(pf->ctx, pf->m);
    for (size_t k = 0; k < pf->nmethods; k++) {
        Z3_ast val, t;
        struct wit w2;
        bool ok;

        if (k == w->mi ||
            prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin,
                               prover_q_host_text(u), w->port, pf->methods[k]) != NULL) {
            continue;
        }
        val = Z3_mk_unsigned_int64(pf->ctx, k, ms);
        t = val != NULL ? Z3_substitute(pf->ctx, qraw, 1, &pf->m, &val) : NULL;
        PV_GUARD(prover_z3_ok(pf->ctx));
        if (t == NULL || !prover_q_eval_bool(pf, mdl, t)) {
            continue;
        }
        w2 = *w; /* strings shared with 'w': path_add copies them */
        w2.mi = k;
        w2.method = pf->methods[k];
        PV_GUARD(prover_q_wit_record(pf, PROVER_CAT_CAPABILITY, ui, &w2, &ok));
    }
    return PV_RESULT_OK;
}

/* Solve under guard 'g'; on SAT read and re-check the witness and record
 * the path (for capability_expansion with 'qraw', also the keys
 * derive_keys reads off the same model). '*sat' tells whether it was SAT. */
static pv_result solve_one(struct prover_proof *pf, Z3_ast g, enum prover_category cat, size_t ui,
                           Z3_ast qraw, bool *sat) PV_WUR;
static pv_result solve_one(struct prover_proof *pf, Z3_ast g, enum prover_category cat, size_t ui,
                           Z3_ast qraw, bool *sat)
{
    Z3_lbool lb;
    Z3_model mdl;
    struct wit w;
    pv_result r;
    bool ok = false;

    *sat = false;
    if (pf->gql) {
        /* Prefer a witness without a GraphQL operation: a REST finding on a
         * slice with a GraphQL endpoint then shows no operation it does not
         * need. */
        Z3_ast two[2] = {g, prover_not(pf, pf->g)};

        PV_GUARD(check_n(pf, 2, two, &lb));
        if (lb == Z3_L_FALSE) {
            /* then an anonymous operation, when one is a witness: a name
             * the rules do not ask for would only be noise */
            two[1] = pf->anon;
            PV_GUARD(check_n(pf, 2, two, &lb));
        }
        if (lb == Z3_L_FALSE) {
            PV_GUARD(check(pf, g, &lb));
        }
    } else if (pf->rpc) {
        /* Likewise a witness without a call when one shows the same. */
        Z3_ast two[2] = {g, prover_not(pf, pf->rc)};

        PV_GUARD(check_n(pf, 2, two, &lb));
        if (lb == Z3_L_FALSE) {
            PV_GUARD(check(pf, g, &lb));
        }
    } else {
        PV_GUARD(check(pf, g, &lb));
    }
    if (lb == Z3_L_FALSE) {
        return PV_RESULT_OK;
    }
    *sat = true;
    mdl = Z3_solver_get_model(pf->ctx, pf->solver);
    PV_ENSURE(mdl != NULL, PV_ERR_SOLVER);
    Z3_model_inc_ref(pf->ctx, mdl);
    r = prover_q_wit_read(pf, mdl, &w);
    if (pv_ok(r) && cat == PROVER_CAT_BOUNDARY) {
        /* Attribute the counterexample to a candidate unit that allows it. */
        ui = SIZE_MAX;
        for (size_t i = 0; i < pf->units.n && ui == SIZE_MAX; i++) {
            if (pf->units.u[i].rel && pf->units.u[i].side == PROVER_SIDE_C &&
                prover_q_eval_bool(pf, mdl, prover_unit_ok(pf, i))) {
                ui = i;
            }
        }
        if (ui == SIZE_MAX) {
            r = pv_fail(PV_ERR_INTERNAL, "boundary witness without unit");
        }
    }
    if (pv_ok(r)) {
        r = prover_q_wit_record(pf, cat, ui, &w, &ok);
    }
    if (pv_ok(r) && !ok) {
        char ipbuf[64];

        model_ip_format(&w.d, ipbuf, sizeof(ipbuf));
        pv_log_warnx("prover: witness re-check failed: %s %s via %s %s:%u %s %s ip %s%s%s%s%s",
                     prover_category_name(cat), model_rule_key(pf->units.u[ui].rule), w.bin, w.host,
                     (unsigned)w.port, w.method, w.target, ipbuf, w.rpc ? " call " : "",
                     w.rpc ? w.call.method : "", w.rpc && w.call.tool ? " " : "",
                     w.rpc && w.call.tool ? w.call.tool : "");
        pf->res->unknown = PROVER_UNKNOWN_RECHECK;
        r = pv_fail(PV_ERR_INTERNAL, "witness re-check");
    }
    if (pv_ok(r) && cat == PROVER_CAT_CAPABILITY && prover_q_shortcuts(pf)) {
        r = derive_keys(pf, mdl, ui, &w, qraw);
    }
    Z3_model_dec_ref(pf->ctx, mdl);
    prover_q_wit_clear(&w);
    return r;
}

static pv_result ask(struct prover_proof *pf, enum prover_category cat, size_t ui, Z3_ast q) PV_WUR;
static pv_result ask(struct prover_proof *pf, enum prover_category cat, size_t ui, Z3_ast q)
{
    bool sat;

    return solve_one(pf, guard_new(pf, q), cat, ui, NULL, &sat);
}

/* capability_expansion: one path per distinct method. Each key with a
 * path for this (binary, host, port) - found before, by this loop's
 * checks, or read off their models - is excluded, until no key is left. */
static pv_result ask_methods(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast q,
                             Z3_ast qraw) PV_WUR;
static pv_result ask_methods(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast q,
                             Z3_ast qraw)
{
    const struct prover_unit *u = &pf->units.u[ui];
    Z3_ast g = guard_new(pf, q);
    bool sat = true;
    size_t nkeys = prover_q_nkeys(pf);
    bool excl[PROVER_MAX_METHODS + PROVER_Q_GQL_KEYS + PROVER_RPC_MAX_METHODS] = {false};

    for (size_t n = 0; n <= nkeys && sat; n++) {
        /* Keys (methods, GraphQL operation types) already reported for this
         * (binary, host, port). */
        for (size_t i = 0; i < nkeys; i++) {
            if (!excl[i] &&
                prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin,
                                   prover_q_host_text(u), port, prover_q_key_text(pf, i)) != NULL) {
                guard_add(pf, g, prover_not(pf, prover_q_key_term(pf, i, ui)));
                excl[i] = true;
            }
        }
        PV_GUARD(solve_one(pf, g, PROVER_CAT_CAPABILITY, ui, qraw, &sat));
    }
    return PV_RESULT_OK;
}

/* Static filters: can unit 'u' meet a host/binary class at all? */
bool prover_q_host_any(struct prover_proof *pf, const struct prover_unit *u, const bool *cls)
{
    if (u->v.host == NULL && cls == pf->host_ll) {
        /*= docs/semantics.md#hostless
         *# matches every host on its ports except the link-local hosts */
        return false;
    }
    if (u->v.host == NULL) {
        for (size_t a = 0; a < pf->nhost; a++) {
            if (cls[a]) {
                return true;
            }
        }
        return false;
    }
    if (u->v.host_is_ip) {
        return cls[pf->dns.natoms + u->hip];
    }
    for (size_t a = 0; a < pf->dns.natoms; a++) {
        if (cls[a] && prover_atom_has(&pf->dns, a, u->hpat)) {
            return true;
        }
    }
    return false;
}

static bool bin_any(struct prover_proof *pf, const struct prover_unit *u, bool bypass)
{
    for (size_t a = 0; a < pf->bin.natoms; a++) {
        if (pf->bin_bypass[a] == bypass && prover_atom_has(&pf->bin, a, u->bpat)) {
            return true;
        }
    }
    return false;
}

bool prover_q_private_capable(const struct prover_unit *u)
{
    if (u->v.ncidrs > 0) {
        for (size_t i = 0; i < u->v.ncidrs; i++) {
            if (model_cidr_overlaps_private(&u->v.cidrs[i])) {
                return true;
            }
        }
        return false;
    }
    return u->v.host != NULL && u->v.host_is_ip && !u->v.advisor_proposed &&
           model_ip_is_private(&u->v.host_ip);
}

bool prover_q_reach_key_found(const struct prover_proof *pf, const struct prover_unit *u,
                              uint16_t port)
{
    return prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin,
                              prover_q_host_text(u), port, NULL) != NULL ||
           prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin,
                              prover_q_host_text(u), port, NULL) != NULL;
}

/* The model of the "anything new" question is a request of exactly one of
 * the categories it stands for: private_reach_expansion when its
 * destination is private, else (credentialed) a reach category when B does
 * not reach (x, h, p) - l7_bypass_credentialed or
 * credential_reach_expansion by the binary - or capability_expansion for
 * its method. The model satisfies that category's question, so its path is
 * recorded without a check of its own (and, for capability_expansion, the
 * keys derive_keys reads off it); unit_port then asks only what is left. A
 * witness that fails its re-check here records nothing: the category's own
 * question decides it, as without this shortcut. */
static pv_result any_model(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast qraw,
                           bool *handled) PV_WUR;
static pv_result any_model(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast qraw,
                           bool *handled)
{
    const struct prover_unit *u = &pf->units.u[ui];
    bool audit = pf->in->mode == PROVER_AUDIT;
    enum prover_category cat = PROVER_CAT_BOUNDARY; /* none */
    Z3_model mdl = Z3_solver_get_model(pf->ctx, pf->solver);
    struct wit w;
    pv_result r;
    bool ok = false;

    *handled = false;
    PV_ENSURE(mdl != NULL, PV_ERR_SOLVER);
    Z3_model_inc_ref(pf->ctx, mdl);
    r = prover_q_wit_read(pf, mdl, &w);
    if (pv_ok(r) && prover_q_eval_bool(pf, mdl, pf->private_)) {
        if (prover_q_private_capable(u)) {
            cat = PROVER_CAT_PRIVATE_REACH;
        }
    } else if (pv_ok(r) && prover_q_eval_bool(pf, mdl, pf->cred) &&
               !prover_q_eval_bool(pf, mdl, pf->reach[PROVER_SIDE_B])) {
        bool byp = prover_q_eval_bool(pf, mdl, pf->bypass);

        if (bin_any(pf, u, byp)) {
            cat = byp ? PROVER_CAT_L7_BYPASS : PROVER_CAT_CRED_REACH;
        }
    } else if (pv_ok(r) && prover_q_eval_bool(pf, mdl, pf->cred) && !audit) {
        cat = PROVER_CAT_CAPABILITY;
    }
    if (pv_ok(r) && cat == PROVER_CAT_CAPABILITY && prover_q_reach_key_found(pf, u, port)) {
        /* reported as reach: its capability paths would be suppressed */
        *handled = w.port == port;
    } else if (pv_ok(r) && cat != PROVER_CAT_BOUNDARY && w.port == port) {
        r = prover_q_wit_record(pf, cat, ui, &w, &ok);
        *handled = ok;
        if (pv_ok(r) && ok && cat == PROVER_CAT_CAPABILITY) {
            r = derive_keys(pf, mdl, ui, &w, qraw);
        }
    }
    Z3_model_dec_ref(pf->ctx, mdl);
    prover_q_wit_clear(&w);
    return r;
}

/* Can unit 'u' grant method 'k' at all? An enforced REST unit grants only
 * what one of its allow rules names (docs/semantics.md#grant, #methods: `*`
 * any, GET also HEAD, a rule without a method nothing); u is L7, so every
 * request in G0(u) is on an inspected route and ok(u) needs u's grant:
 * capability_expansion through u for a method none of its rules names is
 * UNSAT, as its question would answer. */
bool prover_q_key_grantable(const struct prover_proof *pf, const struct prover_unit *u, size_t k)
{
    const char *m = pf->methods[k];

    if (!u->l7 || !u->v.enforce || u->v.proto != MODEL_PROTO_REST) {
        return true;
    }
    for (size_t i = 0; i < u->v.nallow; i++) {
        struct model_l7rule_view rv;

        model_endpoint_allow_rule(u->ep, i, &rv);
        if (rv.method == NULL || rv.method[0] == '\0') {
            continue;
        }
        if (strcmp(rv.method, "*") == 0 || strcmp(rv.method, m) == 0 ||
            (strcmp(rv.method, "GET") == 0 && strcmp(m, "HEAD") == 0)) {
            return true;
        }
    }
    return false;
}

/* Has every key a path through 'u', or no way to one? */
bool prover_q_keys_all(const struct prover_proof *pf, const struct prover_unit *u,
                       const bool *ex_key)
{
    for (size_t k = 0; k < pf->nmethods; k++) {
        if (!ex_key[k] && prover_q_key_grantable(pf, u, k)) {
            return false;
        }
    }
    return true;
}

/* Can a class not yet excluded hold through unit 'u', by the static filters
 * unit_port applies to the category questions (a credentialed host atom, a
 * binary atom of the class, a private destination u could admit)? */
bool prover_q_class_left(struct prover_proof *pf, const struct prover_unit *u, bool ex_l7,
                         bool ex_cr, bool ex_priv, bool ex_cap)
{
    bool cred = prover_q_host_any(pf, u, pf->host_cred);

    return (cred && !ex_l7 && bin_any(pf, u, true)) || (cred && !ex_cr && bin_any(pf, u, false)) ||
           (cred && !ex_cap) || (!ex_priv && prover_q_private_capable(u));
}

/* DELTA: the categories of the "anything new" question (guard 'g', whose
 * last check was SAT) one model at a time. Each model is a request of one
 * class - l7_bypass_credentialed, credential_reach_expansion,
 * private_reach_expansion, or capability_expansion for its method - and
 * any_model records its path; every class that has its path (from this
 * unit or an earlier one with the same binary, host and port; all of
 * capability_expansion once a reach path exists, as those would be
 * suppressed) is then excluded under 'g' and the question asked again. Its
 * UNSAT proves that no category has a path left to find, exactly what the
 * category questions would each have answered ('*done'). A model that
 * any_model does not handle (a failed re-check) leaves '*done' false: the
 * category questions then decide, as without this shortcut. With 'fresh'
 * no check was made yet: the classes the paths found already have are
 * excluded first (were the question UNSAT, so is the narrower one). */
static pv_result any_classes(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast g,
                             Z3_ast capraw, bool fresh, bool *done) PV_WUR;
static pv_result any_classes(struct prover_proof *pf, size_t ui, uint16_t port, Z3_ast g,
                             Z3_ast capraw, bool fresh, bool *done)
{
    const struct prover_unit *u = &pf->units.u[ui];
    const char *h = prover_q_host_text(u);
    Z3_ast credpub = prover_and2(pf, pf->cred, prover_not(pf, pf->private_));
    Z3_ast noreach = prover_and2(pf, credpub, prover_not(pf, pf->reach[PROVER_SIDE_B]));
    Z3_ast capcls = prover_and2(pf, credpub, pf->reach[PROVER_SIDE_B]);
    bool ex_l7 = false, ex_cr = false, ex_priv = false, ex_cap = false;
    bool ex_key[PROVER_MAX_METHODS] = {false};

    *done = false;
    for (size_t n = 0; n < pf->nmethods + 4; n++) {
        bool handled = true;
        Z3_lbool lb;

        if (n > 0 || !fresh) {
            PV_GUARD(any_model(pf, ui, port, capraw, &handled));
        }
        if (!handled) {
            return PV_RESULT_OK;
        }
        if (!ex_l7 && prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin, h,
                                         port, NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, prover_and2(pf, noreach, pf->bypass)));
            ex_l7 = true;
        }
        if (!ex_cr && prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h,
                                         port, NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, prover_and2(pf, noreach, prover_not(pf, pf->bypass))));
            ex_cr = true;
        }
        if (!ex_priv && prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin,
                                           h, port, NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, pf->private_));
            ex_priv = true;
        }
        if (!ex_cap && prover_q_reach_key_found(pf, u, port)) {
            guard_add(pf, g, prover_not(pf, capcls));
            ex_cap = true;
        }
        for (size_t k = 0; k < pf->nmethods && !ex_cap; k++) {
            if (!ex_key[k] && prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY,
                                                 u->bin, h, port, pf->methods[k]) != NULL) {
                guard_add(pf, g, prover_not(pf, prover_and2(pf, capcls, prover_eqn(pf, pf->m, k))));
                ex_key[k] = true;
            }
        }
        if (!prover_q_class_left(pf, u, ex_l7, ex_cr, ex_priv,
                                 ex_cap || prover_q_keys_all(pf, u, ex_key))) {
            /* the static filters rule out every class not excluded */
            *done = true;
            return PV_RESULT_OK;
        }
        PV_GUARD(check(pf, g, &lb));
        if (lb == Z3_L_FALSE) {
            *done = true;
            return PV_RESULT_OK;
        }
    }
    return PV_RESULT_OK;
}

/* The capability question through unit 'ui' ('base': its G0, port and
 * region) over the terms of Allow_B and Allow_C themselves (derive_keys). */
static Z3_ast cap_raw(struct prover_proof *pf, size_t ui, Z3_ast base)
{
    enum prover_side B = PROVER_SIDE_B;
    enum prover_side C = PROVER_SIDE_C;
    Z3_ast allowc_raw =
        prover_and(pf, 3, (Z3_ast[]){base, pf->allow_raw[C], prover_unit_ok(pf, ui)});

    if (pf->in->mode == PROVER_AUDIT) {
        return prover_and(pf, 5,
                          (Z3_ast[]){allowc_raw, prover_not(pf, pf->private_), pf->cred,
                                     prover_not(pf, pf->bypass), pf->insp[C]});
    }
    return prover_and(pf, 5,
                      (Z3_ast[]){allowc_raw, prover_not(pf, pf->allow_raw[B]),
                                 prover_not(pf, pf->private_), pf->cred, pf->reach[B]});
}

/* The "anything new" question through unit 'ui' on 'port': new allowed
 * requests that are credentialed and public, or private. */
static Z3_ast any_term(struct prover_proof *pf, size_t ui, uint16_t port)
{
    Z3_ast base = prover_and(pf, 3, (Z3_ast[]){pf->g0[ui], prover_port_eq(pf, port), pf->region});
    Z3_ast allowc =
        prover_and(pf, 3, (Z3_ast[]){base, pf->allow[PROVER_SIDE_C], prover_unit_ok(pf, ui)});
    Z3_ast newallow = prover_and2(pf, allowc, prover_not(pf, pf->allow[PROVER_SIDE_B]));

    return prover_and2(
        pf, newallow,
        prover_or2(pf, prover_and2(pf, pf->cred, prover_not(pf, pf->private_)), pf->private_));
}

static pv_result unit_port(struct prover_proof *pf, size_t ui, uint16_t port, bool any_unsat,
                           bool fresh) PV_WUR;
/* 'fresh': paths of u's (binary, host, port) were found from concrete
 * candidates; any_classes then starts from the classes they leave. */
static pv_result unit_port(struct prover_proof *pf, size_t ui, uint16_t port, bool any_unsat,
                           bool fresh)
{
    const struct prover_unit *u = &pf->units.u[ui];
    enum prover_side B = PROVER_SIDE_B;
    enum prover_side C = PROVER_SIDE_C;
    bool audit = pf->in->mode == PROVER_AUDIT;
    Z3_ast base = prover_and(pf, 3, (Z3_ast[]){pf->g0[ui], prover_port_eq(pf, port), pf->region});
    Z3_ast allowc = prover_and(pf, 3, (Z3_ast[]){base, pf->allow[C], prover_unit_ok(pf, ui)});
    Z3_ast newallow = prover_and2(pf, allowc, prover_not(pf, pf->allow[B]));
    bool cred = prover_q_host_any(pf, u, pf->host_cred);
    const char *h = prover_q_host_text(u);
    Z3_ast capraw = NULL; /* the capability question over allow_raw (derive_keys) */

    /* link_local_reach (docs/semantics.md#findings): the grant layer. A
     * hostless unit matches no link-local host (#hostless), on either side,
     * so the question could only be UNSAT for it: prover_q_host_any() skips it. */
    if (prover_q_host_any(pf, u, pf->host_ll) &&
        prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_LINK_LOCAL, u->bin, h, port, NULL) ==
            NULL) {
        PV_GUARD(ask(pf, PROVER_CAT_LINK_LOCAL, ui,
                     prover_and(pf, 5,
                                (Z3_ast[]){base, pf->grant[C], prover_not(pf, pf->grant[B]), pf->ll,
                                           prover_unit_grant(pf, ui)})));
    }
    if ((!cred && !prover_q_private_capable(u)) || any_unsat) {
        return PV_RESULT_OK;
    }
    {
        /* Every remaining category implies new allowed requests through u
         * (Allow_C and not reach_B imply not Allow_B): one question rules
         * them all out for the units that did not change anything. */
        Z3_ast any = any_term(pf, ui, port);
        Z3_lbool lb = Z3_L_TRUE;
        Z3_ast ga = guard_new(pf, any);

        fresh = fresh && prover_q_shortcuts(pf) && !audit;
        if (!fresh) {
            PV_GUARD(check(pf, ga, &lb));
        }
        if (lb == Z3_L_FALSE) {
            return PV_RESULT_OK;
        }
        if (prover_q_shortcuts(pf) && cred) {
            capraw = cap_raw(pf, ui, base);
        }
        if (prover_q_shortcuts(pf) && !audit) {
            bool done;

            PV_GUARD(any_classes(pf, ui, port, ga, capraw, fresh, &done));
            if (done) {
                return PV_RESULT_OK;
            }
        } else if (prover_q_shortcuts(pf)) {
            bool handled;

            PV_GUARD(any_model(pf, ui, port, capraw, &handled));
        }
    }
    if (cred) {
        Z3_ast reachq = prover_and(pf, 4,
                                   (Z3_ast[]){allowc, prover_not(pf, pf->private_), pf->cred,
                                              prover_not(pf, pf->reach[B])});

        if (bin_any(pf, u, true) && prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS,
                                                       u->bin, h, port, NULL) == NULL) {
            PV_GUARD(ask(pf, PROVER_CAT_L7_BYPASS, ui, prover_and2(pf, reachq, pf->bypass)));
        }
        if (bin_any(pf, u, false) &&
            prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port,
                               NULL) == NULL) {
            PV_GUARD(ask(pf, PROVER_CAT_CRED_REACH, ui,
                         prover_and2(pf, reachq, prover_not(pf, pf->bypass))));
        }
        if (audit) {
            if (bin_any(pf, u, false)) {
                PV_GUARD(ask_methods(
                    pf, ui, port,
                    prover_and(pf, 5,
                               (Z3_ast[]){allowc, prover_not(pf, pf->private_), pf->cred,
                                          prover_not(pf, pf->bypass), pf->insp[C]}),
                    capraw));
            }
        } else if (!prover_q_reach_key_found(pf, u, port)) {
            PV_GUARD(ask_methods(pf, ui, port,
                                 prover_and(pf, 4,
                                            (Z3_ast[]){newallow, prover_not(pf, pf->private_),
                                                       pf->cred, pf->reach[B]}),
                                 capraw));
        }
    }
    if (prover_q_private_capable(u) &&
        prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h, port,
                           NULL) == NULL) {
        PV_GUARD(ask(pf, PROVER_CAT_PRIVATE_REACH, ui, prover_and2(pf, newallow, pf->private_)));
    }
    return PV_RESULT_OK;
}

void prover_q_suppress(struct prover_result *res, size_t base)
{
    size_t k = base;

    /* As the reference's finding_delta: a capability path whose (binary,
     * host, port) has new reach is not reported twice. */
    for (size_t i = base; i < res->npaths; i++) {
        struct prover_path *p = &res->paths[i];
        bool drop = false;

        if (p->cat == PROVER_CAT_CAPABILITY) {
            drop = prover_q_path_find(res, base, PROVER_CAT_CRED_REACH, p->binary, p->host, p->port,
                                      NULL) != NULL ||
                   prover_q_path_find(res, base, PROVER_CAT_L7_BYPASS, p->binary, p->host, p->port,
                                      NULL) != NULL;
        }
        if (drop) {
            prover_path_clear(p);
            continue;
        }
        res->paths[k++] = *p;
    }
    res->npaths = k;
}

/* One unit and port whose "anything new" question is asked. */
struct anyq {
    size_t ui;
    uint16_t port;
    Z3_ast t;  /* any_term */
    int state; /* 0 undecided, 1 SAT, -1 UNSAT */
};

/* The "anything new" questions of many units, a group at a time: the
 * disjunction of the undecided ones is asked; UNSAT decides every one of
 * them UNSAT, a model decides SAT each one it satisfies, and the rest is
 * asked again. These questions do not depend on the paths found, so a unit
 * decided UNSAT here is exactly one unit_port would have let go after its
 * own check; the SAT ones are asked by unit_port as before. */
static pv_result any_groups(struct prover_proof *pf, struct anyq *q, size_t n) PV_WUR;
static pv_result any_groups(struct prover_proof *pf, struct anyq *q, size_t n)
{
    Z3_ast *v = pv_calloc(n ? n : 1, sizeof(Z3_ast));
    pv_result r = PV_RESULT_OK;

    PV_GUARD_PTR(v);
    for (size_t round = 0; round <= n && pv_ok(r); round++) {
        size_t k = 0;
        Z3_lbool lb = Z3_L_FALSE;
        Z3_model mdl;

        for (size_t i = 0; i < n; i++) {
            if (q[i].state == 0) {
                v[k++] = q[i].t;
            }
        }
        if (k == 0) {
            break;
        }
        r = check(pf, guard_new(pf, prover_or(pf, k, v)), &lb);
        if (!pv_ok(r)) {
            break;
        }
        if (lb == Z3_L_FALSE) {
            for (size_t i = 0; i < n; i++) {
                q[i].state = q[i].state == 0 ? -1 : q[i].state;
            }
            break;
        }
        mdl = Z3_solver_get_model(pf->ctx, pf->solver);
        if (mdl == NULL) {
            r = pv_fail(PV_ERR_SOLVER, "model");
            break;
        }
        Z3_model_inc_ref(pf->ctx, mdl);
        k = 0;
        for (size_t i = 0; i < n; i++) {
            if (q[i].state == 0 && prover_q_eval_bool(pf, mdl, q[i].t)) {
                q[i].state = 1;
                k++;
            }
        }
        Z3_model_dec_ref(pf->ctx, mdl);
        if (k == 0) {
            /* no disjunct reads true: leave the rest to unit_port */
            break;
        }
    }
    free(v);
    return r;
}

static unsigned cstate(const struct prover_proof *pf, size_t ui, size_t k)
{
    return pf->cdone != NULL ? pf->cdone[pf->coff[ui] + k] : 0;
}

/* The "anything new" question of unit 'ui' at 'port' without the classes
 * whose paths are found (as any_classes excludes them): UNSAT proves that
 * unit_port would find nothing more there. */
static Z3_ast rest_term(struct prover_proof *pf, size_t ui, uint16_t port)
{
    const struct prover_unit *u = &pf->units.u[ui];
    const char *h = prover_q_host_text(u);
    Z3_ast credpub = prover_and2(pf, pf->cred, prover_not(pf, pf->private_));
    Z3_ast noreach = prover_and2(pf, credpub, prover_not(pf, pf->reach[PROVER_SIDE_B]));
    Z3_ast capcls = prover_and2(pf, credpub, pf->reach[PROVER_SIDE_B]);
    Z3_ast v[4 + PROVER_MAX_METHODS];
    size_t n = 0;

    v[n++] = any_term(pf, ui, port);
    if (prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin, h, port, NULL) !=
        NULL) {
        v[n++] = prover_not(pf, prover_and2(pf, noreach, pf->bypass));
    }
    if (prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port, NULL) !=
        NULL) {
        v[n++] = prover_not(pf, prover_and2(pf, noreach, prover_not(pf, pf->bypass)));
    }
    if (prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h, port,
                           NULL) != NULL) {
        v[n++] = prover_not(pf, pf->private_);
    }
    if (prover_q_reach_key_found(pf, u, port)) {
        v[n++] = prover_not(pf, capcls);
    } else {
        for (size_t k = 0; k < pf->nmethods && n < PV_ARRAY_LEN(v); k++) {
            if (prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin, h, port,
                                   pf->methods[k]) != NULL) {
                v[n++] = prover_not(pf, prover_and2(pf, capcls, prover_eqn(pf, pf->m, k)));
            }
        }
    }
    return prover_and(pf, n, v);
}

pv_result prover_queries(struct prover_proof *pf)
{
    struct anyq *q = NULL;
    size_t nq = 0, iq = 0;

    if (pf->in->mode == PROVER_CHECK) {
        Z3_ast bq = prover_and(pf, 3,
                               (Z3_ast[]){pf->region, pf->allow[PROVER_SIDE_C],
                                          prover_not(pf, pf->allow[PROVER_SIDE_B])});

        return ask(pf, PROVER_CAT_BOUNDARY, SIZE_MAX, bq);
    }
    for (size_t i = 0; i < pf->units.n && prover_q_shortcuts(pf); i++) {
        const struct prover_unit *u = &pf->units.u[i];

        if (u->rel && u->side == PROVER_SIDE_C &&
            (prover_q_host_any(pf, u, pf->host_cred) || prover_q_private_capable(u))) {
            for (size_t k = 0; k < u->v.nports; k++) {
                nq += cstate(pf, i, k) != 1;
            }
        }
    }
    if (nq > 1) {
        pv_result r;

        q = pv_calloc(nq, sizeof(*q));
        PV_GUARD_PTR(q);
        nq = 0;
        for (size_t i = 0; i < pf->units.n; i++) {
            const struct prover_unit *u = &pf->units.u[i];

            if (u->rel && u->side == PROVER_SIDE_C &&
                (prover_q_host_any(pf, u, pf->host_cred) || prover_q_private_capable(u))) {
                for (size_t k = 0; k < u->v.nports; k++) {
                    unsigned st = cstate(pf, i, k);

                    if (st == 1) {
                        continue; /* decided from concrete candidates */
                    }
                    q[nq].ui = i;
                    q[nq].port = u->v.ports[k];
                    /* with paths found: what they leave */
                    q[nq++].t =
                        st == 2 ? rest_term(pf, i, u->v.ports[k]) : any_term(pf, i, u->v.ports[k]);
                }
            }
        }
        r = any_groups(pf, q, nq);
        if (!pv_ok(r)) {
            free(q);
            return r;
        }
    } else {
        nq = 0;
    }
    for (size_t i = 0; i < pf->units.n; i++) {
        const struct prover_unit *u = &pf->units.u[i];

        if (!u->rel || u->side != PROVER_SIDE_C) {
            continue;
        }
        for (size_t k = 0; k < u->v.nports; k++) {
            bool skip = false;
            pv_result r;

            if (cstate(pf, i, k) == 1) {
                continue; /* decided from concrete candidates */
            }
            if (iq < nq && q[iq].ui == i && q[iq].port == u->v.ports[k]) {
                skip = q[iq++].state < 0;
            }
            r = unit_port(pf, i, u->v.ports[k], skip, cstate(pf, i, k) == 2);
            if (!pv_ok(r)) {
                free(q);
                return r;
            }
        }
    }
    free(q);
    if (pf->in->mode == PROVER_DELTA) {
        prover_q_suppress(pf->res, pf->path_base);
    }
    return PV_RESULT_OK;
}

bool prover_queries_needed(struct prover_proof *pf)
{
    if (pf->in->mode == PROVER_CHECK) {
        return true;
    }
    for (size_t i = 0; i < pf->units.n; i++) {
        const struct prover_unit *u = &pf->units.u[i];

        if (u->rel && u->side == PROVER_SIDE_C &&
            (prover_q_host_any(pf, u, pf->host_ll) || prover_q_host_any(pf, u, pf->host_cred) ||
             prover_q_private_capable(u))) {
            return true;
        }
    }
    return false;
}
