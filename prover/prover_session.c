/* SPDX-License-Identifier: Apache-2.0 */
/* prover_session.c - the Z3 context of a prover session
 *
 * A session owns one Z3 context created with Z3_mk_context (ASTs live until
 * the context dies) and with the error handler removed, so that a Z3 error is
 * a value checked with prover_z3_ok() and never an exit(1). Contexts created
 * this way only grow, so a session recreates its context after
 * PROVER_RECYCLE_PROOFS proofs; the cost of a context (a few ms) is paid once
 * per that many proofs. One session per thread.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "prover/prover_int.h"

static Z3_context ctx_new(void)
{
    Z3_config cfg = Z3_mk_config();
    Z3_context ctx;

    if (cfg == NULL) {
        return NULL;
    }
    Z3_set_param_value(cfg, "model", "true");
    ctx = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (ctx == NULL) {
        return NULL;
    }
    Z3_set_error_handler(ctx, NULL);
    return ctx;
}

struct prover_session *prover_session_new(void)
{
    struct prover_session *s = pv_calloc(1, sizeof(*s));

    if (s == NULL) {
        return NULL;
    }
    s->ctx = ctx_new();
    if (s->ctx == NULL) {
        free(s);
        pv_errno = PV_ERR_SOLVER;
        return NULL;
    }
    return s;
}

void prover_session_free(struct prover_session *s)
{
    if (s == NULL) {
        return;
    }
    if (s->ctx != NULL) {
        if (s->solver != NULL) {
            Z3_solver_dec_ref(s->ctx, s->solver);
        }
        Z3_del_context(s->ctx);
    }
    prover_lang_memo_free(&s->lang);
    prover_units_free(&s->spare);
    free(s);
}

void prover_session_full_smt(struct prover_session *s, bool on)
{
    if (s != NULL) {
        s->full_smt = on;
    }
}

void prover_session_no_concrete(struct prover_session *s, bool on)
{
    if (s != NULL) {
        s->no_concrete = on;
    }
}

void prover_finalize(void)
{
    Z3_finalize_memory();
}

pv_result prover_session_ready(struct prover_session *s)
{
    PV_ENSURE_REF(s);
    if (s->ctx == NULL || s->proofs >= PROVER_RECYCLE_PROOFS) {
        if (s->ctx != NULL) {
            if (s->solver != NULL) {
                Z3_solver_dec_ref(s->ctx, s->solver);
            }
            Z3_del_context(s->ctx);
        }
        s->solver = NULL;
        s->proofs = 0;
        s->ctx = ctx_new();
        PV_ENSURE(s->ctx != NULL, PV_ERR_SOLVER);
    }
    if (s->solver == NULL) {
        /* The solver keeps its kernel between proofs: its setup is paid
         * once, and each proof pushes a scope that it pops at the end. */
        s->solver = Z3_mk_simple_solver(s->ctx);
        PV_ENSURE(s->solver != NULL && Z3_get_error_code(s->ctx) == Z3_OK, PV_ERR_SOLVER);
        Z3_solver_inc_ref(s->ctx, s->solver);
    }
    if (Z3_solver_get_num_scopes(s->ctx, s->solver) != 0) {
        Z3_solver_pop(s->ctx, s->solver, Z3_solver_get_num_scopes(s->ctx, s->solver));
    }
    s->proofs++;
    return PV_RESULT_OK;
}

pv_result prover_z3_ok(Z3_context ctx)
{
    PV_ENSURE(Z3_get_error_code(ctx) == Z3_OK, PV_ERR_SOLVER);
    return PV_RESULT_OK;
}

double prover_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}
