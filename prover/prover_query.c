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

static const char example_public_ip[] = PROVER_PLACEHOLDER_IP;

/* ---------------------------------------------------------------------------
 * Witnesses
 * ------------------------------------------------------------------------- */

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
};

static void wit_clear(struct wit *w)
{
    free(w->query);
    free(w->target);
    memset(w, 0, sizeof(*w));
}

/* capability_expansion reports one path per key: a method, or for a
 * GraphQL witness its operation type (docs/semantics.md#findings). Keys
 * nmethods + 0..2 are the operation types, nmethods + 3 hash-only. */
static const char *const gql_keys[] = {"graphql:query", "graphql:mutation", "graphql:subscription",
                                       "graphql:persisted"};

static bool unit_is_gql(const struct prover_proof *pf, size_t ui)
{
    return ui < pf->units.n && prover_unit_gql(&pf->units.u[ui]);
}

/* The key of witness 'w' through unit 'ui': through a unit that does not
 * decide GraphQL operations, always the method (its grant ignores them). */
static size_t wit_key(const struct prover_proof *pf, const struct wit *w, size_t ui)
{
    if (!w->gql || !unit_is_gql(pf, ui)) {
        return w->mi;
    }
    return pf->nmethods + (w->op.persisted_id != NULL ? 3u : (size_t)w->op.type);
}

static const char *key_text(const struct prover_proof *pf, size_t key)
{
    return key < pf->nmethods ? pf->methods[key] : gql_keys[(key - pf->nmethods) & 3u];
}

/* The requests that show key 'key' through unit 'ui'. */
static Z3_ast key_term(struct prover_proof *pf, size_t key, size_t ui)
{
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

static bool eval_bool(struct prover_proof *pf, Z3_model mdl, Z3_ast t)
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

    if (!pf->gql || !eval_bool(pf, mdl, pf->g)) {
        return PV_RESULT_OK;
    }
    w->gql = true;
    if (eval_bool(pf, mdl, pf->pq)) {
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
    if (!eval_bool(pf, mdl, pf->anon)) {
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

static pv_result wit_read(struct prover_proof *pf, Z3_model mdl, struct wit *w) PV_WUR;
static pv_result wit_read(struct prover_proof *pf, Z3_model mdl, struct wit *w)
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
    pv_dynbuf_init(&q, 1u << 20);
    for (size_t k = 0; k < pf->nqkeys && pv_ok(r); k++) {
        const struct prover_qkey *qk = &pf->qkeys[k];

        for (size_t a = 0; a < qk->dim.natoms && pv_ok(r); a++) {
            if (!eval_bool(pf, mdl, qk->present[a])) {
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

static void decide(const struct model_policy *p, const struct wit *w, const struct model_ip *d,
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
    }
    rq.dest = d;
    model_decide(p, &rq, out);
}

/* reach_B(x, h, p) on concrete values: a connection-level decision. For an
 * IP host the destination is the host; for a DNS name the evaluator checks
 * everything but the (unresolved) address, which is exactly "some
 * destination is admitted" because allowed_ips never lie wholly inside the
 * always-blocked ranges. */
static bool reach_concrete(const struct model_policy *p, const struct wit *w)
{
    struct model_decision dc;

    decide(p, w, w->host_is_ip ? &w->d : NULL, true, &dc);
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
static bool recheck(struct prover_proof *pf, enum prover_category cat, const struct wit *w,
                    struct model_decision *dc)
{
    struct model_decision db;
    bool priv = model_ip_is_private(&w->d);
    bool audit = pf->in->mode == PROVER_AUDIT;

    decide(pf->C, w, &w->d, false, dc);
    decide(pf->B, w, &w->d, false, &db);
    switch (cat) {
    case PROVER_CAT_LINK_LOCAL:
        return dc->grant && !db.grant && ll_concrete(w);
    case PROVER_CAT_L7_BYPASS:
    case PROVER_CAT_CRED_REACH:
        return dc->allow && !priv && cred_concrete(pf, w->host) && !reach_concrete(pf->B, w) &&
               bypass_concrete(pf, w->bin) == (cat == PROVER_CAT_L7_BYPASS);
    case PROVER_CAT_CAPABILITY:
        if (audit) {
            return dc->allow && !priv && cred_concrete(pf, w->host) &&
                   !bypass_concrete(pf, w->bin) && dc->route == MODEL_ROUTE_INSPECTED;
        }
        return dc->allow && !db.allow && !priv && cred_concrete(pf, w->host) &&
               reach_concrete(pf->B, w);
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

static const char *host_text(const struct prover_unit *u)
{
    return u->v.host != NULL ? u->v.host : "*";
}

/* A path of this proof part (paths from 'base' on): paths with one (binary,
 * host, port) come from units of one component (prover_units_slice),
 * so a part never needs to look at another's. */
static struct prover_path *path_find(struct prover_result *res, size_t base,
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

static pv_result path_add(struct prover_proof *pf, enum prover_category cat, size_t ui,
                          const struct wit *w, const struct model_decision *dc) PV_WUR;
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
    p->host = pv_strdup(host_text(u));
    p->port = w->port;
    p->method = cat == PROVER_CAT_CAPABILITY ? pv_strdup(key_text(pf, wit_key(pf, w, ui))) : NULL;
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
static pv_result path_add(struct prover_proof *pf, enum prover_category cat, size_t ui,
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
static pv_result wit_record(struct prover_proof *pf, enum prover_category cat, size_t ui,
                            struct wit *w, bool *ok) PV_WUR;
static pv_result wit_record(struct prover_proof *pf, enum prover_category cat, size_t ui,
                            struct wit *w, bool *ok)
{
    struct model_decision dc;

    *ok = recheck(pf, cat, w, &dc);
    if (!*ok) {
        return PV_RESULT_OK;
    }
    if (!w->host_is_ip && !model_ip_is_private(&w->d)) {
        /* Prefer a readable public address when it shows the same. */
        struct wit w2 = *w;
        struct model_decision dc2;

        if (model_ip_parse_strict(example_public_ip, strlen(example_public_ip), &w2.d) &&
            recheck(pf, cat, &w2, &dc2)) {
            w->d = w2.d;
            dc = dc2;
        }
    }
    if (path_find(pf->res, pf->path_base, cat, pf->units.u[ui].bin, host_text(&pf->units.u[ui]),
                  w->port,
                  cat == PROVER_CAT_CAPABILITY ? key_text(pf, wit_key(pf, w, ui)) : NULL) == NULL) {
        return path_add(pf, cat, ui, w, &dc);
    }
    return PV_RESULT_OK;
}

/* Are the shortcuts on (see derive_keys and any_model)? Only where a key
 * is a method: GraphQL slices keep one check per question. */
static bool shortcuts(const struct prover_proof *pf)
{
    return !pf->s->full_smt && !pf->gql && pf->in->mode != PROVER_CHECK;
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

        if (k == w->mi || path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin,
                                    host_text(u), w->port, pf->methods[k]) != NULL) {
            continue;
        }
        val = Z3_mk_unsigned_int64(pf->ctx, k, ms);
        t = val != NULL ? Z3_substitute(pf->ctx, qraw, 1, &pf->m, &val) : NULL;
        PV_GUARD(prover_z3_ok(pf->ctx));
        if (t == NULL || !eval_bool(pf, mdl, t)) {
            continue;
        }
        w2 = *w; /* strings shared with 'w': path_add copies them */
        w2.mi = k;
        w2.method = pf->methods[k];
        PV_GUARD(wit_record(pf, PROVER_CAT_CAPABILITY, ui, &w2, &ok));
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
    r = wit_read(pf, mdl, &w);
    if (pv_ok(r) && cat == PROVER_CAT_BOUNDARY) {
        /* Attribute the counterexample to a candidate unit that allows it. */
        ui = SIZE_MAX;
        for (size_t i = 0; i < pf->units.n && ui == SIZE_MAX; i++) {
            if (pf->units.u[i].rel && pf->units.u[i].side == PROVER_SIDE_C &&
                eval_bool(pf, mdl, prover_unit_ok(pf, i))) {
                ui = i;
            }
        }
        if (ui == SIZE_MAX) {
            r = pv_fail(PV_ERR_INTERNAL, "boundary witness without unit");
        }
    }
    if (pv_ok(r)) {
        r = wit_record(pf, cat, ui, &w, &ok);
    }
    if (pv_ok(r) && !ok) {
        char ipbuf[64];

        model_ip_format(&w.d, ipbuf, sizeof(ipbuf));
        pv_log_warnx("prover: witness re-check failed: %s %s via %s %s:%u %s %s ip %s",
                     prover_category_name(cat), model_rule_key(pf->units.u[ui].rule), w.bin, w.host,
                     (unsigned)w.port, w.method, w.target, ipbuf);
        pf->res->unknown = PROVER_UNKNOWN_RECHECK;
        r = pv_fail(PV_ERR_INTERNAL, "witness re-check");
    }
    if (pv_ok(r) && cat == PROVER_CAT_CAPABILITY && shortcuts(pf)) {
        r = derive_keys(pf, mdl, ui, &w, qraw);
    }
    Z3_model_dec_ref(pf->ctx, mdl);
    wit_clear(&w);
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
    size_t nkeys = pf->nmethods + (pf->gql ? PV_ARRAY_LEN(gql_keys) : 0);
    bool excl[PROVER_MAX_METHODS + PV_ARRAY_LEN(gql_keys)] = {false};

    for (size_t n = 0; n <= nkeys && sat; n++) {
        /* Keys (methods, GraphQL operation types) already reported for this
         * (binary, host, port). */
        for (size_t i = 0; i < nkeys; i++) {
            if (!excl[i] && path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin,
                                      host_text(u), port, key_text(pf, i)) != NULL) {
                guard_add(pf, g, prover_not(pf, key_term(pf, i, ui)));
                excl[i] = true;
            }
        }
        PV_GUARD(solve_one(pf, g, PROVER_CAT_CAPABILITY, ui, qraw, &sat));
    }
    return PV_RESULT_OK;
}

/* Static filters: can unit 'u' meet a host/binary class at all? */
static bool host_any(struct prover_proof *pf, const struct prover_unit *u, const bool *cls)
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

static bool private_capable(const struct prover_unit *u)
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

static bool reach_key_found(const struct prover_proof *pf, const struct prover_unit *u,
                            uint16_t port)
{
    return path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, host_text(u), port,
                     NULL) != NULL ||
           path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin, host_text(u), port,
                     NULL) != NULL;
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
    r = wit_read(pf, mdl, &w);
    if (pv_ok(r) && eval_bool(pf, mdl, pf->private_)) {
        if (private_capable(u)) {
            cat = PROVER_CAT_PRIVATE_REACH;
        }
    } else if (pv_ok(r) && eval_bool(pf, mdl, pf->cred) &&
               !eval_bool(pf, mdl, pf->reach[PROVER_SIDE_B])) {
        bool byp = eval_bool(pf, mdl, pf->bypass);

        if (bin_any(pf, u, byp)) {
            cat = byp ? PROVER_CAT_L7_BYPASS : PROVER_CAT_CRED_REACH;
        }
    } else if (pv_ok(r) && eval_bool(pf, mdl, pf->cred) && !audit) {
        cat = PROVER_CAT_CAPABILITY;
    }
    if (pv_ok(r) && cat == PROVER_CAT_CAPABILITY && reach_key_found(pf, u, port)) {
        /* reported as reach: its capability paths would be suppressed */
        *handled = w.port == port;
    } else if (pv_ok(r) && cat != PROVER_CAT_BOUNDARY && w.port == port) {
        r = wit_record(pf, cat, ui, &w, &ok);
        *handled = ok;
        if (pv_ok(r) && ok && cat == PROVER_CAT_CAPABILITY) {
            r = derive_keys(pf, mdl, ui, &w, qraw);
        }
    }
    Z3_model_dec_ref(pf->ctx, mdl);
    wit_clear(&w);
    return r;
}

/* Can unit 'u' grant method 'k' at all? An enforced REST unit grants only
 * what one of its allow rules names (docs/semantics.md#grant, #methods: `*`
 * any, GET also HEAD, a rule without a method nothing); u is L7, so every
 * request in G0(u) is on an inspected route and ok(u) needs u's grant:
 * capability_expansion through u for a method none of its rules names is
 * UNSAT, as its question would answer. */
static bool key_grantable(const struct prover_proof *pf, const struct prover_unit *u, size_t k)
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
static bool keys_all(const struct prover_proof *pf, const struct prover_unit *u, const bool *ex_key)
{
    for (size_t k = 0; k < pf->nmethods; k++) {
        if (!ex_key[k] && key_grantable(pf, u, k)) {
            return false;
        }
    }
    return true;
}

/* Can a class not yet excluded hold through unit 'u', by the static filters
 * unit_port applies to the category questions (a credentialed host atom, a
 * binary atom of the class, a private destination u could admit)? */
static bool class_left(struct prover_proof *pf, const struct prover_unit *u, bool ex_l7, bool ex_cr,
                       bool ex_priv, bool ex_cap)
{
    bool cred = host_any(pf, u, pf->host_cred);

    return (cred && !ex_l7 && bin_any(pf, u, true)) || (cred && !ex_cr && bin_any(pf, u, false)) ||
           (cred && !ex_cap) || (!ex_priv && private_capable(u));
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
    const char *h = host_text(u);
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
        if (!ex_l7 && path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin, h, port,
                                NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, prover_and2(pf, noreach, pf->bypass)));
            ex_l7 = true;
        }
        if (!ex_cr && path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port,
                                NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, prover_and2(pf, noreach, prover_not(pf, pf->bypass))));
            ex_cr = true;
        }
        if (!ex_priv && path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h, port,
                                  NULL) != NULL) {
            guard_add(pf, g, prover_not(pf, pf->private_));
            ex_priv = true;
        }
        if (!ex_cap && reach_key_found(pf, u, port)) {
            guard_add(pf, g, prover_not(pf, capcls));
            ex_cap = true;
        }
        for (size_t k = 0; k < pf->nmethods && !ex_cap; k++) {
            if (!ex_key[k] && path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin, h,
                                        port, pf->methods[k]) != NULL) {
                guard_add(pf, g, prover_not(pf, prover_and2(pf, capcls, prover_eqn(pf, pf->m, k))));
                ex_key[k] = true;
            }
        }
        if (!class_left(pf, u, ex_l7, ex_cr, ex_priv, ex_cap || keys_all(pf, u, ex_key))) {
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
    bool cred = host_any(pf, u, pf->host_cred);
    const char *h = host_text(u);
    Z3_ast capraw = NULL; /* the capability question over allow_raw (derive_keys) */

    /* link_local_reach (docs/semantics.md#findings): the grant layer. A
     * hostless unit matches no link-local host (#hostless), on either side,
     * so the question could only be UNSAT for it: host_any() skips it. */
    if (host_any(pf, u, pf->host_ll) &&
        path_find(pf->res, pf->path_base, PROVER_CAT_LINK_LOCAL, u->bin, h, port, NULL) == NULL) {
        PV_GUARD(ask(pf, PROVER_CAT_LINK_LOCAL, ui,
                     prover_and(pf, 5,
                                (Z3_ast[]){base, pf->grant[C], prover_not(pf, pf->grant[B]), pf->ll,
                                           prover_unit_grant(pf, ui)})));
    }
    if ((!cred && !private_capable(u)) || any_unsat) {
        return PV_RESULT_OK;
    }
    {
        /* Every remaining category implies new allowed requests through u
         * (Allow_C and not reach_B imply not Allow_B): one question rules
         * them all out for the units that did not change anything. */
        Z3_ast any = any_term(pf, ui, port);
        Z3_lbool lb = Z3_L_TRUE;
        Z3_ast ga = guard_new(pf, any);

        fresh = fresh && shortcuts(pf) && !audit;
        if (!fresh) {
            PV_GUARD(check(pf, ga, &lb));
        }
        if (lb == Z3_L_FALSE) {
            return PV_RESULT_OK;
        }
        if (shortcuts(pf) && cred) {
            capraw = cap_raw(pf, ui, base);
        }
        if (shortcuts(pf) && !audit) {
            bool done;

            PV_GUARD(any_classes(pf, ui, port, ga, capraw, fresh, &done));
            if (done) {
                return PV_RESULT_OK;
            }
        } else if (shortcuts(pf)) {
            bool handled;

            PV_GUARD(any_model(pf, ui, port, capraw, &handled));
        }
    }
    if (cred) {
        Z3_ast reachq = prover_and(pf, 4,
                                   (Z3_ast[]){allowc, prover_not(pf, pf->private_), pf->cred,
                                              prover_not(pf, pf->reach[B])});

        if (bin_any(pf, u, true) && path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin,
                                              h, port, NULL) == NULL) {
            PV_GUARD(ask(pf, PROVER_CAT_L7_BYPASS, ui, prover_and2(pf, reachq, pf->bypass)));
        }
        if (bin_any(pf, u, false) && path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH,
                                               u->bin, h, port, NULL) == NULL) {
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
        } else if (!reach_key_found(pf, u, port)) {
            PV_GUARD(ask_methods(pf, ui, port,
                                 prover_and(pf, 4,
                                            (Z3_ast[]){newallow, prover_not(pf, pf->private_),
                                                       pf->cred, pf->reach[B]}),
                                 capraw));
        }
    }
    if (private_capable(u) && path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h,
                                        port, NULL) == NULL) {
        PV_GUARD(ask(pf, PROVER_CAT_PRIVATE_REACH, ui, prover_and2(pf, newallow, pf->private_)));
    }
    return PV_RESULT_OK;
}

static void suppress(struct prover_result *res, size_t base)
{
    size_t k = base;

    /* As the reference's finding_delta: a capability path whose (binary,
     * host, port) has new reach is not reported twice. */
    for (size_t i = base; i < res->npaths; i++) {
        struct prover_path *p = &res->paths[i];
        bool drop = false;

        if (p->cat == PROVER_CAT_CAPABILITY) {
            drop = path_find(res, base, PROVER_CAT_CRED_REACH, p->binary, p->host, p->port, NULL) !=
                       NULL ||
                   path_find(res, base, PROVER_CAT_L7_BYPASS, p->binary, p->host, p->port, NULL) !=
                       NULL;
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
            if (q[i].state == 0 && eval_bool(pf, mdl, q[i].t)) {
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

/* ---------------------------------------------------------------------------
 * Concrete candidates
 *
 * A SAT answer needs no solver when a concrete request shows it: a request
 * r through unit u (a delta unit of C: r in G0(u) puts it in the region)
 * that C allows through u itself (the evaluator's granting endpoint is u's:
 * u grants and admits r under C's route, which is ok(u)) and that passes
 * the category's re-check satisfies the category's question, so the path
 * it shows is one the question would find. Requests are built from the
 * atoms' witnesses (a member of each binary, host and path atom inside u's
 * patterns), each method, and destinations of the right class (the public
 * placeholder, the first addresses of u's allowed_ips). When the paths
 * found leave no class for the static filters of any_classes, the unit's
 * questions are decided exactly as any_classes would decide them after an
 * UNSAT; otherwise the solver goes on from that unit.
 * ------------------------------------------------------------------------- */

/* Candidate destinations for unit 'u' (an IP host: its own address). */
static size_t conc_dests(const struct prover_unit *u, struct model_ip *out, size_t max)
{
    size_t n = 0;

    if (u->v.host_is_ip) {
        out[n++] = u->v.host_ip;
        return n;
    }
    if (u->v.ncidrs == 0) {
        if (model_ip_parse_strict(example_public_ip, strlen(example_public_ip), &out[n])) {
            n++;
        }
        return n;
    }
    for (size_t i = 0; i < u->v.ncidrs && n + 2 <= max; i++) {
        struct model_ip a = u->v.cidrs[i].net;

        out[n++] = a;
        if (u->v.cidrs[i].prefix < 128) {
            /* the network address + 1 (inside the CIDR: prefix < 128) */
            for (int b = 15; b >= 0; b--) {
                if (++a.b[b] != 0) {
                    break;
                }
            }
            out[n++] = a;
        }
    }
    return n;
}

/* Which class may still be found through 'u' at 'port'; as any_classes. */
/* Classes ruled out by going through every (binary atom, credentialed
 * host atom) of a unit (conc_reach). */
#define CONC_NO_L7 1u
#define CONC_NO_CR 2u
#define CONC_NO_CAP 4u

static bool conc_left(struct prover_proof *pf, const struct prover_unit *u, uint16_t port,
                      unsigned none)
{
    const char *h = host_text(u);
    bool ex_key[PROVER_MAX_METHODS] = {false};
    bool ex_l7 = (none & CONC_NO_L7) != 0 || path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS,
                                                       u->bin, h, port, NULL) != NULL;
    bool ex_cr =
        (none & CONC_NO_CR) != 0 ||
        path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port, NULL) != NULL;
    bool ex_priv =
        path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h, port, NULL) != NULL;
    bool ex_cap = (none & CONC_NO_CAP) != 0 || reach_key_found(pf, u, port);

    for (size_t k = 0; k < pf->nmethods && !ex_cap; k++) {
        ex_key[k] = path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin, h, port,
                              pf->methods[k]) != NULL;
    }
    return class_left(pf, u, ex_l7, ex_cr, ex_priv, ex_cap || keys_all(pf, u, ex_key));
}

/* Has the class of category 'cat' (key 'mi' for capability) a path
 * through 'u' at 'port' already, or is it suppressed by a reach path? */
static bool conc_found(struct prover_proof *pf, const struct prover_unit *u, uint16_t port,
                       enum prover_category cat, size_t mi)
{
    const char *h = host_text(u);

    if (cat == PROVER_CAT_CAPABILITY) {
        return reach_key_found(pf, u, port) ||
               path_find(pf->res, pf->path_base, cat, u->bin, h, port, pf->methods[mi]) != NULL;
    }
    return path_find(pf->res, pf->path_base, cat, u->bin, h, port, NULL) != NULL;
}

/* One request (binary, host, destination fixed in 'w') through unit 'ui'
 * for category 'cat': each method (capability: each key without a path)
 * and each path atom, within '*budget' decisions. */
static pv_result conc_try(struct prover_proof *pf, size_t ui, enum prover_category cat,
                          struct wit *w, size_t *budget) PV_WUR;
static pv_result conc_try(struct prover_proof *pf, size_t ui, enum prover_category cat,
                          struct wit *w, size_t *budget)
{
    const struct prover_unit *u = &pf->units.u[ui];
    char empty[1] = "";

    for (size_t k = 0; k < pf->nmethods; k++) {
        if (!key_grantable(pf, u, k)) {
            continue; /* u grants no request with this method */
        }
        if (conc_found(pf, u, w->port, cat, k)) {
            if (cat != PROVER_CAT_CAPABILITY) {
                return PV_RESULT_OK;
            }
            continue;
        }
        for (size_t a = 0; a<pf->path.natoms && * budget> 0; a++) {
            struct model_decision dc, db;
            size_t n0;
            bool ok;

            (*budget)--;
            w->mi = k;
            w->method = pf->methods[k];
            w->ua = a;
            w->path = pf->path.atoms[a].w;
            w->target = (char *)pf->path.atoms[a].w; /* borrowed: never freed here */
            w->query = empty;
            decide(pf->C, w, &w->d, false, &dc);
            if (!dc.allow || dc.endpoint != u->ep) {
                continue;
            }
            decide(pf->B, w, &w->d, false, &db);
            if (db.allow) {
                continue;
            }
            n0 = pf->res->npaths;
            PV_GUARD(wit_record(pf, cat, ui, w, &ok));
            pf->s->nconcrete += pf->res->npaths - n0;
            if (ok) {
                break;
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result conc_unit_port(struct prover_proof *pf, size_t ui, uint16_t port,
                                bool *done) PV_WUR;
/* reach_B is a function of binary, host and port (docs/semantics.md#reach),
 * the same for every member of a binary atom and a host atom: one witness
 * of each pair of u's binary atoms and credentialed host atoms decides
 * whether some pair is not reached by B (the reach categories, by the
 * binary's class) and whether some pair is (capability_expansion). A class
 * no pair allows is UNSAT through u, as its question would answer. Within
 * the budget only; otherwise nothing is ruled out. */
static unsigned conc_reach(struct prover_proof *pf, const struct prover_unit *u, uint16_t port)
{
    bool nr_byp = false, nr_nob = false, r_any = false;
    size_t n = 0;
    struct wit w;

    for (size_t ha = 0; ha < pf->nhost; ha++) {
        if (u->v.host_is_ip ? ha != pf->dns.natoms + u->hip
                            : (ha >= pf->dns.natoms || !prover_atom_has(&pf->dns, ha, u->hpat))) {
            continue;
        }
        if (!pf->host_cred[ha]) {
            continue;
        }
        for (size_t xa = 0; xa < pf->bin.natoms; xa++) {
            if (!prover_atom_has(&pf->bin, xa, u->bpat)) {
                continue;
            }
            if (++n > PROVER_CONCRETE_BUDGET) {
                return 0;
            }
            memset(&w, 0, sizeof(w));
            w.port = port;
            w.bin = pf->bin.atoms[xa].w;
            if (u->v.host_is_ip) {
                w.host_is_ip = true;
                w.d = u->v.host_ip;
                model_ip_format(&w.d, w.ipbuf, sizeof(w.ipbuf));
                w.host = w.ipbuf;
            } else {
                w.host = pf->dns.atoms[ha].w;
            }
            if (reach_concrete(pf->B, &w)) {
                r_any = true;
            } else if (pf->bin_bypass[xa]) {
                nr_byp = true;
            } else {
                nr_nob = true;
            }
        }
    }
    return (nr_byp ? 0u : CONC_NO_L7) | (nr_nob ? 0u : CONC_NO_CR) | (r_any ? 0u : CONC_NO_CAP);
}

/* capability_expansion keys left through unit 'ui' at 'port', decided by
 * going through every request the atoms tell apart: each (binary atom,
 * credentialed host atom) of u that B reaches, each destination atom that
 * is not private (an IP host: its own address), each path atom, and the
 * key's method (no query keys in the part: a part with any is left to the
 * solver). A request C allows and B does not, through u's own endpoint, is
 * the key's path; one C allows through another endpoint first leaves u's
 * own grant unknown, and the key to the solver; when no request shows the
 * key, its question is UNSAT. '*decided' when every key is found or ruled
 * out, within PROVER_CONCRETE_KEYS decisions. */
static pv_result conc_keys(struct prover_proof *pf, size_t ui, uint16_t port, bool *decided) PV_WUR;
static pv_result conc_keys(struct prover_proof *pf, size_t ui, uint16_t port, bool *decided)
{
    const struct prover_unit *u = &pf->units.u[ui];
    size_t n = 0;
    char empty[1] = "";

    *decided = false;
    if (pf->nqkeys != 0 || reach_key_found(pf, u, port)) {
        return PV_RESULT_OK;
    }
    if (pf->datoms == NULL) {
        PV_GUARD(prover_dest_atoms(pf));
    }
    for (size_t k = 0; k < pf->nmethods; k++) {
        bool found = false;

        if (!key_grantable(pf, u, k) || conc_found(pf, u, port, PROVER_CAT_CAPABILITY, k)) {
            continue;
        }
        for (size_t ha = 0; ha < pf->nhost && !found; ha++) {
            if ((u->v.host_is_ip
                     ? ha != pf->dns.natoms + u->hip
                     : (ha >= pf->dns.natoms || !prover_atom_has(&pf->dns, ha, u->hpat))) ||
                !pf->host_cred[ha]) {
                continue;
            }
            for (size_t xa = 0; xa < pf->bin.natoms && !found; xa++) {
                struct wit w;
                size_t nd = u->v.host_is_ip ? 1 : pf->ndatoms;

                if (!prover_atom_has(&pf->bin, xa, u->bpat)) {
                    continue;
                }
                memset(&w, 0, sizeof(w));
                w.xa = xa;
                w.ha = ha;
                w.port = port;
                w.bin = pf->bin.atoms[xa].w;
                if (u->v.host_is_ip) {
                    w.host_is_ip = true;
                    w.d = u->v.host_ip;
                    model_ip_format(&w.d, w.ipbuf, sizeof(w.ipbuf));
                    w.host = w.ipbuf;
                } else {
                    w.host = pf->dns.atoms[ha].w;
                }
                if (!reach_concrete(pf->B, &w)) {
                    continue; /* capability needs reach_B */
                }
                for (size_t di = 0; di < nd && !found; di++) {
                    if (!u->v.host_is_ip) {
                        w.d = pf->datoms[di].w;
                    }
                    if (model_ip_is_private(&w.d)) {
                        continue;
                    }
                    for (size_t a = 0; a < pf->path.natoms && !found; a++) {
                        struct model_decision dc, db;
                        bool ok;

                        if (++n > PROVER_CONCRETE_KEYS) {
                            return PV_RESULT_OK;
                        }
                        w.mi = k;
                        w.method = pf->methods[k];
                        w.ua = a;
                        w.path = pf->path.atoms[a].w;
                        w.target = (char *)pf->path.atoms[a].w; /* borrowed */
                        w.query = empty;
                        decide(pf->C, &w, &w.d, false, &dc);
                        if (!dc.allow) {
                            continue;
                        }
                        decide(pf->B, &w, &w.d, false, &db);
                        if (db.allow) {
                            continue;
                        }
                        if (dc.endpoint != u->ep) {
                            return PV_RESULT_OK; /* u's own grant unknown */
                        }
                        PV_GUARD(wit_record(pf, PROVER_CAT_CAPABILITY, ui, &w, &ok));
                        if (!ok) {
                            return PV_RESULT_OK;
                        }
                        found = true;
                    }
                }
            }
        }
    }
    *decided = true;
    return PV_RESULT_OK;
}

static pv_result conc_unit_port(struct prover_proof *pf, size_t ui, uint16_t port, bool *done)
{
    unsigned none = 0;
    const struct prover_unit *u = &pf->units.u[ui];
    bool cred = host_any(pf, u, pf->host_cred);
    bool privc = private_capable(u);
    struct model_ip ds[8];
    size_t nd, budget = PROVER_CONCRETE_BUDGET;

    *done = false;
    if (host_any(pf, u, pf->host_ll) && path_find(pf->res, pf->path_base, PROVER_CAT_LINK_LOCAL,
                                                  u->bin, host_text(u), port, NULL) == NULL) {
        return PV_RESULT_OK; /* link_local_reach: the solver */
    }
    if (!cred && !privc) {
        *done = true; /* as unit_port: no further question */
        return PV_RESULT_OK;
    }
    if (!u->delta || u->v.host == NULL || u->v.unresolved) {
        return PV_RESULT_OK;
    }
    nd = conc_dests(u, ds, PV_ARRAY_LEN(ds));
    if (cred) {
        none = conc_reach(pf, u, port);
    }
    for (size_t ha = 0; ha < pf->nhost && budget > 0; ha++) {
        struct wit w;
        char ipbuf[64];

        if (u->v.host_is_ip ? ha != pf->dns.natoms + u->hip
                            : (ha >= pf->dns.natoms || !prover_atom_has(&pf->dns, ha, u->hpat))) {
            continue;
        }
        if (!pf->host_cred[ha] && !privc) {
            continue;
        }
        for (size_t xa = 0; xa < pf->bin.natoms && budget > 0; xa++) {
            if (!prover_atom_has(&pf->bin, xa, u->bpat)) {
                continue;
            }
            for (size_t di = 0; di < nd && budget > 0; di++) {
                bool priv = model_ip_is_private(&ds[di]);
                enum prover_category cat;

                if (priv ? !privc : !pf->host_cred[ha]) {
                    continue;
                }
                if (model_ip_is_always_blocked(&ds[di])) {
                    continue;
                }
                memset(&w, 0, sizeof(w));
                w.xa = xa;
                w.ha = ha;
                w.port = port;
                w.d = ds[di];
                w.bin = pf->bin.atoms[xa].w;
                if (u->v.host_is_ip) {
                    w.host_is_ip = true;
                    model_ip_format(&w.d, ipbuf, sizeof(ipbuf));
                    memcpy(w.ipbuf, ipbuf, sizeof(w.ipbuf));
                    w.host = w.ipbuf;
                } else {
                    w.host = pf->dns.atoms[ha].w;
                }
                if (priv) {
                    cat = PROVER_CAT_PRIVATE_REACH;
                } else if (!reach_concrete(pf->B, &w)) {
                    cat = pf->bin_bypass[xa] ? PROVER_CAT_L7_BYPASS : PROVER_CAT_CRED_REACH;
                } else {
                    cat = PROVER_CAT_CAPABILITY;
                }
                PV_GUARD(conc_try(pf, ui, cat, &w, &budget));
                if (!conc_left(pf, u, port, none)) {
                    *done = true;
                    return PV_RESULT_OK;
                }
            }
        }
    }
    *done = !conc_left(pf, u, port, none);
    if (!*done && cred && !conc_left(pf, u, port, none | CONC_NO_CAP)) {
        /* only capability keys are left */
        PV_GUARD(conc_keys(pf, ui, port, done));
    }
    return PV_RESULT_OK;
}

/* Is a unit and port before 'ui' with the same binary, host and port left
 * for the solver? Then 'ui' must wait: the first unit that shows a path
 * names its rule, so paths of one (binary, host, port) are found in the
 * units' order. Paths of another (binary, host, port) never meet. */
static bool conc_waits(const struct prover_proof *pf, size_t ui, uint16_t port)
{
    const struct prover_unit *u = &pf->units.u[ui];

    for (size_t i = 0; i < ui; i++) {
        const struct prover_unit *v = &pf->units.u[i];

        if (!v->rel || v->side != PROVER_SIDE_C || strcmp(v->bin, u->bin) != 0 ||
            strcmp(host_text(v), host_text(u)) != 0) {
            continue;
        }
        for (size_t k = 0; k < v->v.nports; k++) {
            if (v->v.ports[k] == port && pf->cdone[pf->coff[i] + k] != 1) {
                return true;
            }
        }
    }
    return false;
}

/* Has a path of unit 'ui''s binary, host and port been found (then its
 * questions start from the classes left: any_classes with 'fresh')? */
static bool conc_has_path(struct prover_proof *pf, size_t ui, uint16_t port)
{
    const struct prover_unit *u = &pf->units.u[ui];
    const char *h = host_text(u);

    for (size_t i = pf->path_base; i < pf->res->npaths; i++) {
        const struct prover_path *p = &pf->res->paths[i];

        if (p->port == port && p->cat != PROVER_CAT_LINK_LOCAL && strcmp(p->binary, u->bin) == 0 &&
            strcmp(p->host, h) == 0) {
            return true;
        }
    }
    return false;
}

pv_result prover_queries_concrete(struct prover_proof *pf, bool *done)
{
    size_t n = 0;
    bool all = true;
    bool adds_only = true; /* no unit of B is delta */

    *done = false;
    if (!shortcuts(pf) || pf->in->mode != PROVER_DELTA || pf->s->no_concrete) {
        return PV_RESULT_OK;
    }
    pf->coff = pv_calloc(pf->units.n + 1, sizeof(size_t));
    PV_GUARD_PTR(pf->coff);
    for (size_t i = 0; i < pf->units.n; i++) {
        pf->coff[i] = n;
        n += pf->units.u[i].v.nports;
    }
    pf->coff[pf->units.n] = n;
    pf->cdone = pv_calloc(n ? n : 1, 1);
    PV_GUARD_PTR(pf->cdone);
    for (size_t i = 0; i < pf->units.n && adds_only; i++) {
        adds_only = !(pf->units.u[i].side == PROVER_SIDE_B && pf->units.u[i].delta);
    }
    for (size_t i = 0; i < pf->units.n; i++) {
        const struct prover_unit *u = &pf->units.u[i];

        if (!u->rel || u->side != PROVER_SIDE_C) {
            continue;
        }
        if (adds_only && !u->delta) {
            /* B's units are all C's here: a request u (on both sides)
             * grants and admits under C's route, with no deny of C, is
             * allowed by B too - B's route is opaque (u admits it) or
             * inspected (u grants and admits it, and B's deny rules are
             * among C's) - so every question through u is UNSAT; the same
             * for the grant layer (link_local_reach) */
            memset(pf->cdone + pf->coff[i], 1, u->v.nports);
            continue;
        }
        for (size_t k = 0; k < u->v.nports; k++) {
            bool ok = false;

            /* the deadline bounds these decisions as it bounds the checks */
            PV_ENSURE(prover_now_ms() <= pf->deadline, PV_ERR_TIMEOUT);
            if (!conc_waits(pf, i, u->v.ports[k])) {
                PV_GUARD(conc_unit_port(pf, i, u->v.ports[k], &ok));
            }
            pf->cdone[pf->coff[i] + k] = ok ? 1 : conc_has_path(pf, i, u->v.ports[k]) ? 2 : 0;
            all = all && ok;
        }
    }
    if (all) {
        suppress(pf->res, pf->path_base);
        *done = true;
    }
    return PV_RESULT_OK;
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
    const char *h = host_text(u);
    Z3_ast credpub = prover_and2(pf, pf->cred, prover_not(pf, pf->private_));
    Z3_ast noreach = prover_and2(pf, credpub, prover_not(pf, pf->reach[PROVER_SIDE_B]));
    Z3_ast capcls = prover_and2(pf, credpub, pf->reach[PROVER_SIDE_B]);
    Z3_ast v[4 + PROVER_MAX_METHODS];
    size_t n = 0;

    v[n++] = any_term(pf, ui, port);
    if (path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS, u->bin, h, port, NULL) != NULL) {
        v[n++] = prover_not(pf, prover_and2(pf, noreach, pf->bypass));
    }
    if (path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port, NULL) != NULL) {
        v[n++] = prover_not(pf, prover_and2(pf, noreach, prover_not(pf, pf->bypass)));
    }
    if (path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h, port, NULL) !=
        NULL) {
        v[n++] = prover_not(pf, pf->private_);
    }
    if (reach_key_found(pf, u, port)) {
        v[n++] = prover_not(pf, capcls);
    } else {
        for (size_t k = 0; k < pf->nmethods && n < PV_ARRAY_LEN(v); k++) {
            if (path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin, h, port,
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
    for (size_t i = 0; i < pf->units.n && shortcuts(pf); i++) {
        const struct prover_unit *u = &pf->units.u[i];

        if (u->rel && u->side == PROVER_SIDE_C &&
            (host_any(pf, u, pf->host_cred) || private_capable(u))) {
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
                (host_any(pf, u, pf->host_cred) || private_capable(u))) {
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
        suppress(pf->res, pf->path_base);
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
            (host_any(pf, u, pf->host_ll) || host_any(pf, u, pf->host_cred) ||
             private_capable(u))) {
            return true;
        }
    }
    return false;
}
