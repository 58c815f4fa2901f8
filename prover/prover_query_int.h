/* SPDX-License-Identifier: Apache-2.0 */
/* prover_query_int.h - what prover_query.c (the solver's questions) and
 * prover_concrete.c (the concrete candidates tried before them) and
 * prover_witness.c (witnesses, their re-check, paths) share:
 * the witness request read off a model or built from atoms, its re-check
 * with the concrete evaluator, the paths found so far and the static
 * filters both use. Private to those two files. */
#ifndef PROVER_QUERY_INT_H
#define PROVER_QUERY_INT_H

#include "prover/prover_int.h"

/* A witness: one concrete request, as atoms' indexes and their texts. */
struct wit {
    size_t xa, ha, ua, mi;
    uint16_t port;
    struct model_ip d;
    bool host_is_ip;
    char ipbuf[64];
    const char *bin;
    const char *host;
    const char *method;
    const char *path;
    char *query;  /* new */
    char *target; /* new: path?query */
    /* GraphQL operation (docs/semantics.md#graphql); gql false = none */
    bool gql;
    struct model_gql_op op; /* strings borrowed from atoms, or pidbuf */
    char *fields[PROVER_GQL_MAX_FIELDS];
    char pidbuf[64];
    /* JSON-RPC/MCP call (docs/semantics.md#rpc); rpc false = none. Names
     * borrowed from atoms. */
    bool rpc;
    struct model_rpc_call call;
};

bool prover_q_class_left(struct prover_proof *pf, const struct prover_unit *u, bool ex_l7,
                         bool ex_cr, bool ex_priv, bool ex_cap);
void prover_q_decide(const struct model_policy *p, const struct wit *w, const struct model_ip *d,
                     bool conn, struct model_decision *out);
bool prover_q_host_any(struct prover_proof *pf, const struct prover_unit *u, const bool *cls);
const char *prover_q_host_text(const struct prover_unit *u);
bool prover_q_key_grantable(const struct prover_proof *pf, const struct prover_unit *u, size_t k);
bool prover_q_keys_all(const struct prover_proof *pf, const struct prover_unit *u,
                       const bool *ex_key);
struct prover_path *prover_q_path_find(struct prover_result *res, size_t base,
                                       enum prover_category cat, const char *bin, const char *host,
                                       uint16_t port, const char *method);
bool prover_q_private_capable(const struct prover_unit *u);
bool prover_q_reach_concrete(const struct model_policy *p, const struct wit *w);
bool prover_q_reach_key_found(const struct prover_proof *pf, const struct prover_unit *u,
                              uint16_t port);
bool prover_q_shortcuts(const struct prover_proof *pf);
void prover_q_suppress(struct prover_result *res, size_t base);
pv_result prover_q_wit_record(struct prover_proof *pf, enum prover_category cat, size_t ui,
                              struct wit *w, bool *ok) PV_WUR;

void prover_q_wit_clear(struct wit *w);
size_t prover_q_wit_key(const struct prover_proof *pf, const struct wit *w, size_t ui);
const char *prover_q_key_text(const struct prover_proof *pf, size_t key);
Z3_ast prover_q_key_term(struct prover_proof *pf, size_t key, size_t ui);
bool prover_q_eval_bool(struct prover_proof *pf, Z3_model mdl, Z3_ast t);
pv_result prover_q_wit_read(struct prover_proof *pf, Z3_model mdl, struct wit *w) PV_WUR;
bool prover_q_recheck(struct prover_proof *pf, enum prover_category cat, const struct wit *w,
                      struct model_decision *dc);
pv_result prover_q_path_add(struct prover_proof *pf, enum prover_category cat, size_t ui,
                            const struct wit *w, const struct model_decision *dc) PV_WUR;

/* Capability keys past the methods: the GraphQL operation types and
 * hash-only persisted queries (prover_witness.c). */
#define PROVER_Q_GQL_KEYS 4
extern const char *const prover_q_gql_keys[PROVER_Q_GQL_KEYS];
/* Past those, one key per atom of the call method dimension (pf->rkeys):
 * through a unit that decides calls, a witness's key is its call's
 * method. The number of keys of the proof: */
size_t prover_q_nkeys(const struct prover_proof *pf);

#endif
