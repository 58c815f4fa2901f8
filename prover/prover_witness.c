/* SPDX-License-Identifier: Apache-2.0 */
/* prover_witness.c - a SAT answer's witness request: read off the solver's
 * model (or built by prover_concrete.c), re-checked with the concrete
 * evaluator (model_decide) before it is reported, and recorded as a path
 * of the result (docs/internals/prover.md). Shared with prover_query.c and
 * prover_concrete.c through prover_query_int.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "prover/prover_int.h"
#include "prover/prover_query_int.h"

/* ---------------------------------------------------------------------------
 * Witnesses
 * ------------------------------------------------------------------------- */

void prover_q_wit_clear(struct wit *w)
{
    free(w->query);
    free(w->target);
    memset(w, 0, sizeof(*w));
}

/* capability_expansion reports one path per key: a method, or for a
 * GraphQL witness its operation type (docs/semantics.md#findings). Keys
 * nmethods + 0..2 are the operation types, nmethods + 3 hash-only. */
const char *const prover_q_gql_keys[PROVER_Q_GQL_KEYS] = {
    "graphql:query", "graphql:mutation", "graphql:subscription", "graphql:persisted"};

static bool unit_is_gql(const struct prover_proof *pf, size_t ui)
{
    return ui < pf->units.n && prover_unit_gql(&pf->units.u[ui]);
}

static bool unit_is_rpc(const struct prover_proof *pf, size_t ui)
{
    return ui < pf->units.n && prover_unit_rpc(&pf->units.u[ui]);
}

size_t prover_q_nkeys(const struct prover_proof *pf)
{
    if (pf->rpc) {
        return pf->nmethods + PROVER_Q_GQL_KEYS + pf->rmeth.natoms;
    }
    return pf->nmethods + (pf->gql ? PROVER_Q_GQL_KEYS : 0);
}

/* The method atom of the witness's call. */
static size_t wit_rmeth(const struct prover_proof *pf, const struct wit *w)
{
    for (size_t a = 0; a < pf->rmeth.natoms; a++) {
        if (pf->rmeth.atoms[a].w == w->call.method) {
            return a;
        }
    }
    return 0;
}

/* The key of witness 'w' through unit 'ui': through a unit that decides
 * neither GraphQL operations nor calls, always the method (its grant
 * ignores them); through one that decides calls, the call's method
 * (docs/semantics.md#findings). */
size_t prover_q_wit_key(const struct prover_proof *pf, const struct wit *w, size_t ui)
{
    if (w->rpc && unit_is_rpc(pf, ui)) {
        return pf->nmethods + PROVER_Q_GQL_KEYS + wit_rmeth(pf, w);
    }
    if (!w->gql || !unit_is_gql(pf, ui)) {
        return w->mi;
    }
    return pf->nmethods + (w->op.persisted_id != NULL ? 3u : (size_t)w->op.type);
}

const char *prover_q_key_text(const struct prover_proof *pf, size_t key)
{
    if (key < pf->nmethods) {
        return pf->methods[key];
    }
    if (key >= pf->nmethods + PROVER_Q_GQL_KEYS) {
        size_t a = key - pf->nmethods - PROVER_Q_GQL_KEYS;

        return pf->rkeys != NULL && a < pf->rmeth.natoms ? pf->rkeys[a] : "rpc:";
    }
    return prover_q_gql_keys[(key - pf->nmethods) & 3u];
}

/* The requests that show key 'key' through unit 'ui'. */
Z3_ast prover_q_key_term(struct prover_proof *pf, size_t key, size_t ui)
{
    if (key >= pf->nmethods + PROVER_Q_GQL_KEYS) {
        return prover_and2(pf, pf->rc,
                           prover_eqn(pf, pf->rmeth.var, key - pf->nmethods - PROVER_Q_GQL_KEYS));
    }
    if (key < pf->nmethods && unit_is_rpc(pf, ui)) {
        return prover_and2(pf, prover_not(pf, pf->rc), prover_eqn(pf, pf->m, key));
    }
    if (key < pf->nmethods && !unit_is_gql(pf, ui)) {
        return prover_eqn(pf, pf->m, key);
    }
    if (key < pf->nmethods) {
        return prover_and2(pf, prover_not(pf, pf->g), prover_eqn(pf, pf->m, key));
    }
    if (key - pf->nmethods == 3) {
        return prover_and2(pf, pf->g, pf->pq);
    }
    return prover_and(
        pf, 3,
        (Z3_ast[]){pf->g, prover_not(pf, pf->pq), prover_eqn(pf, pf->t, key - pf->nmethods)});
}

static bool eval_u64(struct prover_proof *pf, Z3_model mdl, Z3_ast t, uint64_t *out)
{
    Z3_ast v = NULL;

    if (t == NULL || !Z3_model_eval(pf->ctx, mdl, t, true, &v) || v == NULL) {
        return false;
    }
    return Z3_get_numeral_uint64(pf->ctx, v, out) && Z3_get_error_code(pf->ctx) == Z3_OK;
}

bool prover_q_eval_bool(struct prover_proof *pf, Z3_model mdl, Z3_ast t)
{
    Z3_ast v = NULL;

    if (t == NULL || !Z3_model_eval(pf->ctx, mdl, t, true, &v) || v == NULL) {
        return false;
    }
    return Z3_get_bool_value(pf->ctx, v) == Z3_L_TRUE;
}

static pv_result pct(struct pv_dynbuf *b, const char *s, size_t len) PV_WUR;
static pv_result pct(struct pv_dynbuf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            PV_GUARD(pv_dynbuf_addc(b, (char)c));
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};

            PV_GUARD(pv_dynbuf_add(b, e, 3));
        }
    }
    return PV_RESULT_OK;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The GraphQL operation of the model: a hash-only id, or a document whose
 * root fields are the distinct values of the field variables, sorted. */
static pv_result wit_gql(struct prover_proof *pf, Z3_model mdl, struct wit *w) PV_WUR;
static pv_result wit_gql(struct prover_proof *pf, Z3_model mdl, struct wit *w)
{
    uint64_t v;

    if (!pf->gql || !prover_q_eval_bool(pf, mdl, pf->g)) {
        return PV_RESULT_OK;
    }
    w->gql = true;
    if (prover_q_eval_bool(pf, mdl, pf->pq)) {
        PV_ENSURE(eval_u64(pf, mdl, pf->pid, &v) && v <= pf->npids, PV_ERR_SOLVER);
        if (v < pf->npids) {
            w->op.persisted_id = (char *)(uintptr_t)pf->pids[v];
            return PV_RESULT_OK;
        }
        /* an id no registry of the slice holds */
        for (unsigned n = 0;; n++) {
            bool taken = false;

            (void)snprintf(w->pidbuf, sizeof(w->pidbuf), "%s-%u", PROVER_GQL_UNREGISTERED, n);
            for (size_t k = 0; k < pf->npids && !taken; k++) {
                taken = strcmp(pf->pids[k], w->pidbuf) == 0;
            }
            if (!taken) {
                break;
            }
        }
        w->op.persisted_id = w->pidbuf;
        return PV_RESULT_OK;
    }
    PV_ENSURE(eval_u64(pf, mdl, pf->t, &v) && v < 3, PV_ERR_SOLVER);
    w->op.type = (enum model_gql_optype)v;
    if (!prover_q_eval_bool(pf, mdl, pf->anon)) {
        PV_ENSURE(eval_u64(pf, mdl, pf->gname.var, &v) && v < pf->gname.natoms, PV_ERR_SOLVER);
        w->op.name = pf->gname.atoms[v].w;
    }
    w->op.fields = w->fields;
    for (size_t i = 0; i < pf->nfv; i++) {
        char *f;
        bool dup = false;

        PV_ENSURE(eval_u64(pf, mdl, pf->fv[i], &v) && v < pf->gfield.natoms, PV_ERR_SOLVER);
        f = pf->gfield.atoms[v].w;
        for (size_t k = 0; k < w->op.nfields && !dup; k++) {
            dup = strcmp(w->fields[k], f) == 0;
        }
        if (!dup) {
            w->fields[w->op.nfields++] = f;
        }
    }
    qsort(w->fields, w->op.nfields, sizeof(w->fields[0]), str_cmp);
    return PV_RESULT_OK;
}

/* The call of the model (docs/semantics.md#rpc): its kind, its method
 * atom's witness and its tool atom's witness (none past the atoms). */
static pv_result wit_rpc(struct prover_proof *pf, Z3_model mdl, struct wit *w) PV_WUR;
static pv_result wit_rpc(struct prover_proof *pf, Z3_model mdl, struct wit *w)
{
    uint64_t v;

    if (!pf->rpc || !prover_q_eval_bool(pf, mdl, pf->rc)) {
        return PV_RESULT_OK;
    }
    w->rpc = true;
    PV_ENSURE(eval_u64(pf, mdl, pf->rk, &v) && v <= MODEL_RPC_END, PV_ERR_SOLVER);
    w->call.kind = (enum model_rpc_kind)v;
    PV_ENSURE(eval_u64(pf, mdl, pf->rmeth.var, &v) && v < pf->rmeth.natoms, PV_ERR_SOLVER);
    w->call.method = pf->rmeth.atoms[v].w;
    PV_ENSURE(eval_u64(pf, mdl, pf->rtool.var, &v) && v <= pf->rtool.natoms, PV_ERR_SOLVER);
    w->call.tool = v < pf->rtool.natoms ? pf->rtool.atoms[v].w : NULL;
    if (w->call.kind == MODEL_RPC_REQUEST) {
        w->call.id[0] = '1';
    }
    return PV_RESULT_OK;
}

pv_result prover_q_wit_read(struct prover_proof *pf, Z3_model mdl, struct wit *w)
{
    uint64_t v;
    struct pv_dynbuf q;
    pv_result r = PV_RESULT_OK;

    memset(w, 0, sizeof(*w));
    PV_ENSURE(eval_u64(pf, mdl, pf->bin.var, &v) && v < pf->bin.natoms, PV_ERR_SOLVER);
    w->xa = (size_t)v;
    PV_ENSURE(eval_u64(pf, mdl, pf->h, &v) && v < pf->nhost, PV_ERR_SOLVER);
    w->ha = (size_t)v;
    PV_ENSURE(eval_u64(pf, mdl, pf->path.var, &v) && v < pf->path.natoms, PV_ERR_SOLVER);
    w->ua = (size_t)v;
    PV_ENSURE(eval_u64(pf, mdl, pf->m, &v) && v < pf->nmethods, PV_ERR_SOLVER);
    w->mi = (size_t)v;
    PV_ENSURE(eval_u64(pf, mdl, pf->p, &v) && v < pf->nports, PV_ERR_SOLVER);
    w->port = pf->ports[v];
    PV_ENSURE(eval_u64(pf, mdl, pf->d, &v) && v < pf->ndatoms, PV_ERR_SOLVER);
    w->d = pf->datoms[v].w;
    w->bin = pf->bin.atoms[w->xa].w;
    if (w->ha < pf->dns.natoms) {
        w->host = pf->dns.atoms[w->ha].w;
    } else {
        w->host_is_ip = true;
        model_ip_format(&w->d, w->ipbuf, sizeof(w->ipbuf));
        w->host = w->ipbuf;
    }
    w->method = pf->methods[w->mi];
    w->path = pf->path.atoms[w->ua].w;
    PV_GUARD(wit_gql(pf, mdl, w));
    PV_GUARD(wit_rpc(pf, mdl, w));
    pv_dynbuf_init(&q, 1u << 20);
    for (size_t k = 0; k < pf->nqkeys && pv_ok(r); k++) {
        const struct prover_qkey *qk = &pf->qkeys[k];

        for (size_t a = 0; a < qk->dim.natoms && pv_ok(r); a++) {
            if (!prover_q_eval_bool(pf, mdl, qk->present[a])) {
                continue;
            }
            if (q.len > 0) {
                r = pv_dynbuf_addc(&q, '&');
            }
            if (pv_ok(r)) {
                r = pct(&q, qk->key, strlen(qk->key));
            }
            if (pv_ok(r)) {
                r = pv_dynbuf_addc(&q, '=');
            }
            if (pv_ok(r)) {
                r = pct(&q, qk->dim.atoms[a].w, qk->dim.atoms[a].wlen);
            }
        }
    }
    if (pv_ok(r)) {
        r = pv_dynbuf_addstr(&q, "");
    }
    if (!pv_ok(r)) {
        pv_dynbuf_free(&q);
        return r;
    }
    w->query = pv_dynbuf_take(&q, NULL);
    PV_GUARD_PTR(w->query);
    {
        size_t pl = strlen(w->path);
        size_t ql = strlen(w->query);

        w->target = pv_malloc(pl + ql + 2);
        PV_GUARD_PTR(w->target);
        memcpy(w->target, w->path, pl);
        if (ql > 0) {
            w->target[pl] = '?';
            memcpy(w->target + pl + 1, w->query, ql + 1);
        } else {
            w->target[pl] = '\0';
        }
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Re-check with the concrete evaluator
 * ------------------------------------------------------------------------- */

void prover_q_decide(const struct model_policy *p, const struct wit *w, const struct model_ip *d,
                     bool conn, struct model_decision *out)
{
    struct model_request rq;
    const char *bins[1] = {w->bin};

    memset(&rq, 0, sizeof(rq));
    rq.binaries = bins;
    rq.nbinaries = 1;
    rq.host = w->host;
    rq.host_len = strlen(w->host);
    rq.port = w->port;
    if (!conn) {
        rq.method = w->method;
        rq.target = w->target;
        rq.target_len = strlen(w->target);
        rq.gql = w->gql ? &w->op : NULL;
        rq.rpc = w->rpc ? &w->call : NULL;
    }
    rq.dest = d;
    model_decide(p, &rq, out);
}

/* reach_B(x, h, p) on concrete values: a connection-level decision. For an
 * IP host the destination is the host; for a DNS name the evaluator checks
 * everything but the (unresolved) address, which is exactly "some
 * destination is admitted" because allowed_ips never lie wholly inside the
 * always-blocked ranges. */
bool prover_q_reach_concrete(const struct model_policy *p, const struct wit *w)
{
    struct model_decision dc;

    prover_q_decide(p, w, w->host_is_ip ? &w->d : NULL, true, &dc);
    return dc.allow;
}

static bool cred_concrete(const struct prover_proof *pf, const char *host)
{
    const struct model_credset *cs = pf->in->creds;

    for (size_t i = 0; cs != NULL && i < model_credset_count(cs); i++) {
        if (model_cred_covers_host(cs, i, host, strlen(host))) {
            return true;
        }
    }
    return false;
}

static bool bypass_concrete(const struct prover_proof *pf, const char *bin)
{
    const struct model_registry *reg = pf->in->reg;

    for (size_t i = 0; reg != NULL && i < model_registry_nbinaries(reg); i++) {
        if (model_registry_binary_bypasses_l7(reg, i) &&
            model_glob_match(model_registry_binary_glob(reg, i), bin, strlen(bin))) {
            return true;
        }
    }
    return false;
}

static bool ll_concrete(const struct wit *w)
{
    if (w->host_is_ip) {
        return model_ip_is_link_local(&w->d);
    }
    return model_host_is_metadata_name(w->host, strlen(w->host));
}

/* Does the witness show category 'cat'? 'dc' gets the candidate's decision. */
bool prover_q_recheck(struct prover_proof *pf, enum prover_category cat, const struct wit *w,
                      struct model_decision *dc)
{
    struct model_decision db;
    bool priv = model_ip_is_private(&w->d);
    bool audit = pf->in->mode == PROVER_AUDIT;

    prover_q_decide(pf->C, w, &w->d, false, dc);
    prover_q_decide(pf->B, w, &w->d, false, &db);
    switch (cat) {
    case PROVER_CAT_LINK_LOCAL:
        return dc->grant && !db.grant && ll_concrete(w);
    case PROVER_CAT_L7_BYPASS:
    case PROVER_CAT_CRED_REACH:
        return dc->allow && !priv && cred_concrete(pf, w->host) &&
               !prover_q_reach_concrete(pf->B, w) &&
               bypass_concrete(pf, w->bin) == (cat == PROVER_CAT_L7_BYPASS);
    case PROVER_CAT_CAPABILITY:
        if (audit) {
            return dc->allow && !priv && cred_concrete(pf, w->host) &&
                   !bypass_concrete(pf, w->bin) && dc->route == MODEL_ROUTE_INSPECTED;
        }
        return dc->allow && !db.allow && !priv && cred_concrete(pf, w->host) &&
               prover_q_reach_concrete(pf->B, w);
    case PROVER_CAT_PRIVATE_REACH:
        return dc->allow && !db.allow && priv;
    case PROVER_CAT_BOUNDARY:
        return dc->allow && !db.allow;
    }
    return false;
}

/* ---------------------------------------------------------------------------
 * Paths
 * ------------------------------------------------------------------------- */

const char *prover_q_host_text(const struct prover_unit *u)
{
    return u->v.host != NULL ? u->v.host : "*";
}

/* A path of this proof part (paths from 'base' on): paths with one (binary,
 * host, port) come from units of one component (prover_units_slice),
 * so a part never needs to look at another's. */
struct prover_path *prover_q_path_find(struct prover_result *res, size_t base,
                                       enum prover_category cat, const char *bin, const char *host,
                                       uint16_t port, const char *method)
{
    for (size_t i = base; i < res->npaths; i++) {
        struct prover_path *p = &res->paths[i];

        if (p->cat == cat && p->port == port && strcmp(p->binary, bin) == 0 &&
            strcmp(p->host, host) == 0 &&
            ((method == NULL && p->method == NULL) ||
             (method != NULL && p->method != NULL && strcmp(method, p->method) == 0))) {
            return p;
        }
    }
    return NULL;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? pv_strdup(s) : NULL;
}

/* The witness's GraphQL operation, copied into the path. */
static pv_result path_gql(struct prover_path *p, const struct wit *w) PV_WUR;
static pv_result path_gql(struct prover_path *p, const struct wit *w)
{
    if (!w->gql) {
        return PV_RESULT_OK;
    }
    if (w->op.persisted_id != NULL) {
        p->w.gql_persisted = pv_strdup(w->op.persisted_id);
        PV_GUARD_PTR(p->w.gql_persisted);
        return PV_RESULT_OK;
    }
    p->w.gql_type = pv_strdup(model_gql_optype_name(w->op.type));
    PV_GUARD_PTR(p->w.gql_type);
    if (w->op.name != NULL) {
        p->w.gql_name = pv_strdup(w->op.name);
        PV_GUARD_PTR(p->w.gql_name);
    }
    p->w.gql_fields = pv_calloc(w->op.nfields ? w->op.nfields : 1, sizeof(char *));
    PV_GUARD_PTR(p->w.gql_fields);
    for (size_t i = 0; i < w->op.nfields; i++) {
        p->w.gql_fields[i] = pv_strdup(w->op.fields[i]);
        PV_GUARD_PTR(p->w.gql_fields[i]);
        p->w.ngql_fields = i + 1;
    }
    return PV_RESULT_OK;
}

/* The witness's call, copied into the path. */
static pv_result path_rpc(struct prover_path *p, const struct wit *w) PV_WUR;
static pv_result path_rpc(struct prover_path *p, const struct wit *w)
{
    if (!w->rpc) {
        return PV_RESULT_OK;
    }
    p->w.rpc_kind = pv_strdup(model_rpc_kind_name(w->call.kind));
    p->w.rpc_method = pv_strdup(w->call.method);
    PV_ENSURE(p->w.rpc_kind != NULL && p->w.rpc_method != NULL, PV_ERR_NOMEM);
    if (w->call.tool != NULL) {
        p->w.rpc_tool = pv_strdup(w->call.tool);
        PV_GUARD_PTR(p->w.rpc_tool);
    }
    return PV_RESULT_OK;
}

/* Fill path 'p' (zeroed); on failure 'p' holds what was filled so far. */
static pv_result path_fill(struct prover_proof *pf, struct prover_path *p, enum prover_category cat,
                           size_t ui, const struct wit *w, const struct model_decision *dc) PV_WUR;
static pv_result path_fill(struct prover_proof *pf, struct prover_path *p, enum prover_category cat,
                           size_t ui, const struct wit *w, const struct model_decision *dc)
{
    const struct prover_unit *u = &pf->units.u[ui];
    const struct model_credset *cs = pf->in->creds;
    char ipbuf[64];
    const char *api = NULL;
    const char *action = NULL;
    const char *risk = NULL;

    p->cat = cat;
    p->binary = pv_strdup(u->bin);
    p->host = pv_strdup(prover_q_host_text(u));
    p->port = w->port;
    p->method = cat == PROVER_CAT_CAPABILITY
                    ? pv_strdup(prover_q_key_text(pf, prover_q_wit_key(pf, w, ui)))
                    : NULL;
    p->rule = pv_strdup(model_rule_key(u->rule));
    p->route = dc->route;
    p->w.binary = pv_strdup(w->bin);
    p->w.host = pv_strdup(w->host);
    p->w.port = w->port;
    p->w.method = pv_strdup(w->method);
    p->w.path = pv_strdup(w->path);
    p->w.query = pv_strdup(w->query);
    model_ip_format(&w->d, ipbuf, sizeof(ipbuf));
    p->w.ip = pv_strdup(ipbuf);
    PV_GUARD(path_gql(p, w));
    PV_GUARD(path_rpc(p, w));
    PV_ENSURE(p->binary && p->host && p->rule && p->w.binary && p->w.host && p->w.method &&
                  p->w.path && p->w.query && p->w.ip && (cat != PROVER_CAT_CAPABILITY || p->method),
              PV_ERR_NOMEM);
    if (pf->in->reg != NULL && model_registry_api_action(pf->in->reg, w->host, w->port, w->method,
                                                         w->path, &api, &action, &risk)) {
        p->w.api = dup_or_null(api);
        p->w.action = dup_or_null(action);
        p->w.risk = dup_or_null(risk);
        PV_ENSURE((api == NULL) == (p->w.api == NULL) &&
                      (action == NULL) == (p->w.action == NULL) &&
                      (risk == NULL) == (p->w.risk == NULL),
                  PV_ERR_NOMEM);
    }
    for (size_t i = 0; cs != NULL && i < model_credset_count(cs); i++) {
        if (model_cred_covers_host(cs, i, w->host, strlen(w->host))) {
            void *g = pv_realloc(p->creds, (p->ncreds + 1) * sizeof(char *));

            PV_GUARD_PTR(g);
            p->creds = g;
            p->creds[p->ncreds] = pv_strdup(model_cred_name(cs, i));
            PV_GUARD_PTR(p->creds[p->ncreds]);
            p->ncreds++;
        }
    }
    return PV_RESULT_OK;
}

/* Append one path to the result: only a complete path is ever counted, so
 * an allocation failure leaves no half-filled path behind as evidence. */
pv_result prover_q_path_add(struct prover_proof *pf, enum prover_category cat, size_t ui,
                            const struct wit *w, const struct model_decision *dc)
{
    struct prover_result *res = pf->res;
    struct prover_path *p;
    pv_result r;
    /* capacity: grow by one each time (paths are few) */
    void *g = pv_realloc(res->paths, (res->npaths + 1) * sizeof(*res->paths));

    PV_GUARD_PTR(g);
    res->paths = g;
    p = &res->paths[res->npaths];
    memset(p, 0, sizeof(*p));
    r = path_fill(pf, p, cat, ui, w, dc);
    if (!pv_ok(r)) {
        prover_path_clear(p);
        memset(p, 0, sizeof(*p));
        return r;
    }
    res->npaths++;
    return PV_RESULT_OK;
}
