/* SPDX-License-Identifier: Apache-2.0 */
/* prover_run.c - the proof coordinator and the result object
 *
 * prover_run() reads as the sequence of stages: inputs hash, units, delta,
 * slice, encoding, questions, ordering. Any failing stage ends the proof
 * with verdict UNKNOWN and a reason; nothing but an empty delta or an UNSAT
 * answer to every question yields EMPTY.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "prover/prover_int.h"

#define CAT_ROW(id, name, check, creds, summary) [PROVER_CAT_##id] = {name, summary, check, creds},
static const struct {
    const char *name;
    const char *summary;
    bool check;
    bool creds;
} cats[PROVER_CAT__COUNT] = {PROVER_CATEGORIES(CAT_ROW)};
#undef CAT_ROW

const char *prover_category_name(enum prover_category c)
{
    if ((unsigned)c < PROVER_CAT__COUNT) {
        return cats[c].name;
    }
    return "unknown";
}

const char *prover_category_summary(enum prover_category c)
{
    if ((unsigned)c < PROVER_CAT__COUNT) {
        return cats[c].summary;
    }
    return "unknown";
}

bool prover_category_in_mode(enum prover_category c, enum prover_mode mode)
{
    return (unsigned)c < PROVER_CAT__COUNT && cats[c].check == (mode == PROVER_CHECK);
}

bool prover_category_needs_creds(enum prover_category c)
{
    return (unsigned)c < PROVER_CAT__COUNT && cats[c].creds;
}

/* Why a proof is UNKNOWN: code, text and advice, one row per reason. */
static const struct {
    const char *code, *text, *hint;
} unknowns[PROVER_UNKNOWN__COUNT] = {
    [PROVER_UNKNOWN_NONE] = {"", "", ""},
    [PROVER_UNKNOWN_TIMEOUT] = {"timeout", "timeout",
                                "the proof ran out of time: retry with a larger --timeout-ms "
                                "(options.timeout_ms), or split the change"},
    [PROVER_UNKNOWN_LIMIT] = {"limit", "limit: automaton or solver limit reached",
                              "the patterns are too many or too complex to encode: use fewer "
                              "or simpler host, path and binary globs, or split the change"},
    [PROVER_UNKNOWN_SOLVER] = {"solver", "solver failure",
                               "Z3 could not decide: retry with a larger --timeout-ms, or "
                               "simplify the patterns"},
    [PROVER_UNKNOWN_UNSUPPORTED] = {"unsupported", "unsupported construct",
                                    "the change uses a construct the prover cannot encode: a "
                                    "reviewer must decide"},
    [PROVER_UNKNOWN_MEMORY] = {"memory", "internal: out of memory",
                               "the prover ran out of memory: retry, or split the change"},
    [PROVER_UNKNOWN_RECHECK] = {"recheck", "internal: witness re-check failed",
                                "a prover bug (the log has the witness): report it; a reviewer "
                                "must decide"},
    [PROVER_UNKNOWN_INTERNAL] = {"internal", "internal error",
                                 "a prover bug: report it; a reviewer must decide"},
};

const char *prover_unknown_code(enum prover_unknown u)
{
    return (unsigned)u < PROVER_UNKNOWN__COUNT ? unknowns[u].code : "internal";
}

const char *prover_unknown_text(enum prover_unknown u)
{
    return (unsigned)u < PROVER_UNKNOWN__COUNT ? unknowns[u].text : "internal error";
}

const char *prover_unknown_hint(enum prover_unknown u)
{
    return (unsigned)u < PROVER_UNKNOWN__COUNT ? unknowns[u].hint : "";
}

const char *prover_verdict_name(enum prover_verdict v)
{
    switch (v) {
    case PROVER_VERDICT_EMPTY:
        return "empty";
    case PROVER_VERDICT_FINDINGS:
        return "findings";
    case PROVER_VERDICT_UNKNOWN:
        return "unknown";
    case PROVER_VERDICT_WITHIN:
        return "within";
    case PROVER_VERDICT_EXCEEDS:
        return "exceeds";
    }
    return "unknown";
}

size_t prover_result_ncategories(const struct prover_result *r)
{
    bool seen[PROVER_CAT__COUNT] = {false};
    size_t n = 0;

    for (size_t i = 0; i < r->npaths; i++) {
        if ((unsigned)r->paths[i].cat < PROVER_CAT__COUNT && !seen[r->paths[i].cat]) {
            seen[r->paths[i].cat] = true;
            n++;
        }
    }
    return n;
}

void prover_path_clear(struct prover_path *p)
{
    free(p->binary);
    free(p->host);
    free(p->method);
    free(p->rule);
    for (size_t c = 0; c < p->ncreds; c++) {
        free(p->creds[c]);
    }
    free(p->creds);
    free(p->w.binary);
    free(p->w.host);
    free(p->w.method);
    free(p->w.path);
    free(p->w.query);
    free(p->w.gql_type);
    free(p->w.gql_name);
    for (size_t i = 0; i < p->w.ngql_fields; i++) {
        free(p->w.gql_fields[i]);
    }
    free(p->w.gql_fields);
    free(p->w.gql_persisted);
    free(p->w.rpc_kind);
    free(p->w.rpc_method);
    free(p->w.rpc_tool);
    free(p->w.ip);
    free(p->w.api);
    free(p->w.action);
    free(p->w.risk);
}

void prover_result_free(struct prover_result *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->npaths; i++) {
        prover_path_clear(&r->paths[i]);
    }
    free(r->paths);
    free(r);
}

static int strcmp0(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "");
}

static int path_cmp(const void *pa, const void *pb)
{
    const struct prover_path *a = pa;
    const struct prover_path *b = pb;
    int c;

    if (a->cat != b->cat) {
        return a->cat < b->cat ? -1 : 1;
    }
    c = strcmp(a->binary, b->binary);
    if (c != 0) {
        return c;
    }
    c = strcmp(a->host, b->host);
    if (c != 0) {
        return c;
    }
    if (a->port != b->port) {
        return a->port < b->port ? -1 : 1;
    }
    return strcmp0(a->method, b->method);
}

/* ---------------------------------------------------------------------------
 * Inputs hash: everything the prover reads. Per side, every unit with its
 * rule key (binary pattern + endpoint fingerprint); the credentials; the
 * registry's binary classes; the mode. Parts of a policy that carry no
 * network authority (filesystem, process, names) do not change a proof and
 * are not part of it; this also keeps the hash cheap (the fingerprints are
 * computed for the delta anyway).
 * ------------------------------------------------------------------------- */

/* Decimal digits of 'v' at 'o'; returns the count. */
static size_t fmt_u(char *o, size_t v)
{
    char t[24];
    size_t n = 0;

    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++) {
        o[i] = t[n - 1 - i];
    }
    return n;
}

/* " OFF+LEN " (as snprintf " %zu+%zu "), unterminated; returns the length. */
static size_t fmt_span(char *o, size_t off, size_t len)
{
    size_t n = 0;

    o[n++] = ' ';
    n += fmt_u(o + n, off);
    o[n++] = '+';
    n += fmt_u(o + n, len);
    o[n++] = ' ';
    return n;
}

/* "<pre><len>:<s>", as printf "%s%zu:%s" wrote it (the hash must not
 * change), without printf: a 10,000-rule policy's credentials can name a
 * thousand targets, and the proof appends them all. */
static pv_result add_field(struct pv_dynbuf *b, const char *pre, const char *s) PV_WUR;
static pv_result add_field(struct pv_dynbuf *b, const char *pre, const char *s)
{
    char num[24];
    size_t len = strlen(s);

    PV_GUARD(pv_dynbuf_addstr(b, pre));
    PV_GUARD(pv_dynbuf_add(b, num, fmt_u(num, len)));
    PV_GUARD(pv_dynbuf_addc(b, ':'));
    return pv_dynbuf_add(b, s, len);
}

/* The digest of one side: its compiled network digest, or "-" for the
 * empty policy; NULL when the policy is not compiled. */
static const char *side_digest(const struct model_policy *p)
{
    const char *d;

    if (p == NULL) {
        return "-";
    }
    d = model_policy_network_digest(p);
    return d[0] != '\0' ? d : NULL;
}

static pv_result inputs_sha(const struct prover_input *in, const struct prover_units *us,
                            char out[65]) PV_WUR;
static pv_result inputs_sha(const struct prover_input *in, const struct prover_units *us,
                            char out[65])
{
    struct pv_dynbuf b;
    pv_result r = PV_RESULT_OK;
    const struct model_credset *cs = in->creds;
    const struct model_registry *reg = in->reg;
    char fph[65];
    const struct model_rule *last = NULL;

    const char *db = side_digest(in->mode == PROVER_AUDIT ? NULL : in->baseline);
    const char *dc = side_digest(in->candidate);

    pv_dynbuf_init(&b, (size_t)1 << 31);
    if (db != NULL && dc != NULL) {
        /* Compiled policies carry the digest of their rule keys, endpoint
         * fingerprints and binaries (model_policy_network_digest), computed
         * once: the proof does not rehash them. */
        r = pv_dynbuf_printf(&b, "proviso-prover-inputs-v2\nmode %d\nB %s\nC %s\n", (int)in->mode,
                             db, dc);
    } else {
        /* The fingerprints are hashed in one go; the units then name their
         * side, rule key, binary and fingerprint extent. */
        r = model_sha256_hex(us->arena.buf != NULL ? us->arena.buf : "", us->arena.len, fph);
        if (pv_ok(r)) {
            r = pv_dynbuf_printf(&b, "proviso-prover-inputs-v1\nmode %d\nfp %s\n", (int)in->mode,
                                 fph);
        }
    }
    for (size_t i = 0; pv_ok(r) && (db == NULL || dc == NULL) && i < us->n; i++) {
        const struct prover_unit *u = &us->u[i];
        char num[64];
        size_t n;

        if (u->rule != last) {
            const char *k = model_rule_key(u->rule);

            last = u->rule;
            r = pv_dynbuf_addstr(&b, u->side == PROVER_SIDE_B ? "\nB " : "\nC ");
            if (pv_ok(r)) {
                r = pv_dynbuf_add(&b, k, strlen(k) + 1);
            }
        }
        if (u->fpoff != SIZE_MAX) {
            n = fmt_span(num, u->fpoff, u->fplen);
            if (pv_ok(r)) {
                r = pv_dynbuf_add(&b, num, n);
            }
        } else if (pv_ok(r)) {
            r = pv_dynbuf_add(&b, u->fp, u->fplen);
        }
        if (pv_ok(r)) {
            r = pv_dynbuf_add(&b, u->bin, strlen(u->bin) + 1);
        }
    }
    for (size_t i = 0; pv_ok(r) && cs != NULL && i < model_credset_count(cs); i++) {
        const char *n = model_cred_name(cs, i);
        const char *t = model_cred_type(cs, i);

        r = add_field(&b, "cred ", n ? n : "");
        if (pv_ok(r)) {
            r = add_field(&b, " ", t ? t : "");
        }
        for (size_t j = 0; pv_ok(r) && j < model_cred_ntargets(cs, i); j++) {
            const struct model_glob *g = model_cred_target(cs, i, j);

            r = add_field(&b, " ", g != NULL ? model_glob_text(g) : "");
        }
        if (pv_ok(r)) {
            r = pv_dynbuf_addc(&b, '\n');
        }
    }
    for (size_t i = 0; pv_ok(r) && reg != NULL && i < model_registry_nbinaries(reg); i++) {
        r = add_field(&b, "bin ", model_glob_text(model_registry_binary_glob(reg, i)));
        if (pv_ok(r)) {
            r = pv_dynbuf_addstr(&b, model_registry_binary_bypasses_l7(reg, i) ? " 1\n" : " 0\n");
        }
    }
    if (pv_ok(r)) {
        r = model_sha256_hex(b.buf != NULL ? b.buf : "", b.len, out);
    }
    pv_dynbuf_free(&b);
    return r;
}

/* ---------------------------------------------------------------------------
 * The proof
 * ------------------------------------------------------------------------- */

/* Free what the encoding of one part built and leave the solver at scope
 * 0; what outlives a part (inputs, units, deadline, budget, result,
 * counters) is kept. */
static void encoding_free(struct prover_proof *pf)
{
    struct prover_proof keep;

    if (pf->solver != NULL && Z3_solver_get_num_scopes(pf->ctx, pf->solver) != 0) {
        /* Back to scope 0: the session solver forgets this proof. */
        Z3_solver_pop(pf->ctx, pf->solver, Z3_solver_get_num_scopes(pf->ctx, pf->solver));
    }
    prover_dim_free(&pf->bin);
    prover_dim_free(&pf->dns);
    prover_dim_free(&pf->path);
    for (size_t k = 0; k < pf->nqkeys; k++) {
        prover_dim_free(&pf->qkeys[k].dim);
        free(pf->qkeys[k].present);
    }
    free(pf->qkeys);
    prover_dim_free(&pf->gname);
    prover_dim_free(&pf->gfield);
    for (size_t i = 0; pf->rkeys != NULL && i < pf->rmeth.natoms; i++) {
        free(pf->rkeys[i]);
    }
    free(pf->rkeys);
    prover_dim_free(&pf->rmeth);
    prover_dim_free(&pf->rtool);
    for (size_t i = 0; i < pf->nrglobs; i++) {
        model_glob_free(pf->rglobs[i]);
    }
    free(pf->rglobs);
    free(pf->pids);
    free(pf->fv);
    free(pf->ips);
    for (size_t i = 0; i < pf->ndatoms; i++) {
        free(pf->datoms[i].cidrs);
    }
    free(pf->datoms);
    free(pf->cidrs);
    free(pf->ports);
    free(pf->host_cred);
    free(pf->host_ll);
    free(pf->bin_bypass);
    free(pf->g0);
    free(pf->scope);
    free(pf->grants);
    free(pf->admits);
    free(pf->denies);
    for (size_t i = 0; i < pf->nmeta; i++) {
        model_glob_free(pf->meta[i]);
    }
    free(pf->bypass_pats);
    free(pf->cred_pats);
    free(pf->cred_ips);
    free(pf->cred_of);
    free(pf->cdone);
    free(pf->coff);
    keep = *pf;
    memset(pf, 0, sizeof(*pf));
    pf->s = keep.s;
    pf->ctx = keep.ctx;
    pf->in = keep.in;
    pf->B = keep.B;
    pf->C = keep.C;
    pf->units = keep.units;
    pf->lang_budget = keep.lang_budget;
    pf->deadline = keep.deadline;
    pf->nqueries = keep.nqueries;
    pf->path_base = keep.path_base;
    pf->nguards = keep.nguards;
    pf->res = keep.res;
    pf->ct_isip = keep.ct_isip;
    pf->ct_ip = keep.ct_ip;
}

static void proof_free(struct prover_proof *pf)
{
    encoding_free(pf);
    free(pf->ct_isip);
    free(pf->ct_ip);
    pf->ct_isip = NULL;
    pf->ct_ip = NULL;
    if (pf->s != NULL) {
        prover_units_recycle(&pf->s->spare, &pf->units);
    } else {
        prover_units_free(&pf->units);
    }
}

/* The units of both sides. Compiled policies are paired rule by rule, so
 * that the rules the candidate kept are materialised only where the slice
 * may keep them; their digests make the inputs hash (inputs_sha) read no
 * unit. */
static pv_result units(struct prover_proof *pf) PV_WUR;
static pv_result units(struct prover_proof *pf)
{
    if (prover_units_pairable(pf->B, pf->C)) {
        return prover_units_pair(&pf->units, pf->B, pf->C, pf->deadline);
    }
    PV_GUARD(prover_units_collect(&pf->units, pf->B, PROVER_SIDE_B));
    PV_GUARD(prover_units_collect(&pf->units, pf->C, PROVER_SIDE_C));
    prover_units_seal(&pf->units);
    return PV_RESULT_OK;
}

/* One part of the slice (the whole slice, or one component): atoms, then,
 * when some question can hold, the terms and the questions. */
static pv_result prove_part(struct prover_proof *pf) PV_WUR;
static pv_result prove_part(struct prover_proof *pf)
{
    double t0 = prover_now_ms();
    double t1;
    bool need, done = false;
    pv_result r;

    pf->path_base = pf->res->npaths;
    r = prover_encode_atoms(pf);
    need = pv_ok(r) && prover_queries_needed(pf);
    t1 = prover_now_ms();
    pf->res->ms_encode += t1 - t0;
    t0 = t1;
    if (need) {
        /* most answers come from concrete requests; the terms are built
         * only when a question is left for the solver */
        r = prover_queries_concrete(pf, &done);
        t1 = prover_now_ms();
        pf->res->ms_solve += t1 - t0;
        t0 = t1;
    }
    if (pv_ok(r) && need && !done) {
        r = prover_encode_terms(pf);
        t1 = prover_now_ms();
        pf->res->ms_encode += t1 - t0;
        t0 = t1;
        if (pv_ok(r)) {
            r = prover_queries(pf);
        }
        pf->res->ms_solve += prover_now_ms() - t0;
    }
    return r;
}

/* Prove each component of the slice on its own (prover_units_slice):
 * its atoms cut only its own patterns, and its terms hold only its units, so
 * a change of thousands of unrelated rules is thousands of small proofs,
 * most of which no question can hold in and need no solver. (Proving
 * several small components in one part was measured: a solver check costs
 * more in a bigger scope, and 256-unit parts made a 4,000-rule delta 5
 * times slower, 32-unit parts no faster.) Each part gets
 * the lang-check budget afresh; the deadline bounds the whole. The units of
 * a part are copied, in their order, into one buffer that stands in for the
 * units while the part is proved. */
static pv_result prove_parts(struct prover_proof *pf, const size_t *comp, size_t ncomp) PV_WUR;
static pv_result prove_parts(struct prover_proof *pf, const size_t *comp, size_t ncomp)
{
    struct prover_units *us = &pf->units;
    struct prover_unit *all = us->u;
    size_t alln = us->n, allrel = us->nrel, alldelta = us->ndelta;
    size_t *start = pv_calloc(ncomp + 1, sizeof(size_t));
    size_t *fill = pv_calloc(ncomp + 1, sizeof(size_t));
    struct prover_unit *buf = pv_calloc(allrel + 1, sizeof(*buf));
    pv_result r = PV_RESULT_OK;

    if (start == NULL || fill == NULL || buf == NULL) {
        free(start);
        free(fill);
        free(buf);
        PV_BAIL(PV_ERR_NOMEM);
    }
    for (size_t i = 0; i < alln; i++) {
        if (comp[i] != SIZE_MAX) {
            start[comp[i] + 1]++;
        }
    }
    for (size_t c = 0; c < ncomp; c++) {
        start[c + 1] += start[c];
    }
    for (size_t i = 0; i < alln; i++) {
        if (comp[i] != SIZE_MAX) {
            buf[start[comp[i]] + fill[comp[i]]++] = all[i];
        }
    }
    for (size_t c = 0; c < ncomp && pv_ok(r); c++) {
        if (prover_now_ms() > pf->deadline) {
            r = pv_fail(PV_ERR_TIMEOUT, "components");
            break;
        }
        us->u = buf + start[c];
        us->n = start[c + 1] - start[c];
        us->nrel = us->n;
        us->ndelta = 0;
        for (size_t i = 0; i < us->n; i++) {
            us->ndelta += us->u[i].delta;
        }
        pf->lang_budget = PROVER_MAX_LANG_CHECKS;
        r = prove_part(pf);
        encoding_free(pf);
    }
    us->u = all;
    us->n = alln;
    us->nrel = allrel;
    us->ndelta = alldelta;
    free(start);
    free(fill);
    free(buf);
    return r;
}

static pv_result prove(struct prover_proof *pf) PV_WUR;
static pv_result prove(struct prover_proof *pf)
{
    double t0 = prover_now_ms();
    size_t *comp = NULL;
    size_t ncomp = 0;
    pv_result r;

    PV_GUARD(units(pf));
    PV_GUARD(inputs_sha(pf->in, &pf->units, pf->res->inputs_sha256));
    PV_GUARD(prover_units_delta(&pf->units));
    pf->res->ndelta = pf->units.ndelta;
    if (pf->units.ndelta == 0) {
        /* Same units, same requests allowed: no solver needed. */
        pf->res->ms_units = prover_now_ms() - t0;
        return PV_RESULT_OK;
    }
    r = prover_units_slice(&pf->units, &pf->lang_budget, pf->deadline, &comp, &ncomp);
    pf->res->nunits = pf->units.nrel;
    pf->res->ncomponents = ncomp;
    pf->res->ms_units = prover_now_ms() - t0;
    if (pv_ok(r)) {
        r = ncomp <= 1 ? prove_part(pf) : prove_parts(pf, comp, ncomp);
    }
    free(comp);
    return r;
}

static enum prover_unknown unknown_for(int err)
{
    switch (err) {
    case PV_ERR_TIMEOUT:
        return PROVER_UNKNOWN_TIMEOUT;
    case PV_ERR_LIMIT:
        return PROVER_UNKNOWN_LIMIT;
    case PV_ERR_SOLVER:
        return PROVER_UNKNOWN_SOLVER;
    case PV_ERR_UNSUPPORTED:
        return PROVER_UNKNOWN_UNSUPPORTED;
    case PV_ERR_NOMEM:
        return PROVER_UNKNOWN_MEMORY;
    default:
        return PROVER_UNKNOWN_INTERNAL;
    }
}

struct prover_result *prover_run(struct prover_session *s, const struct prover_input *in)
{
    struct prover_result *res;
    struct prover_proof pf;
    struct model_policy *empty = NULL;
    double t0 = prover_now_ms();
    unsigned tmo;
    pv_result r;

    res = pv_calloc(1, sizeof(*res));
    if (res == NULL) {
        return NULL;
    }
    memset(&pf, 0, sizeof(pf));
    r = (s != NULL && in != NULL && in->candidate != NULL) ? PV_RESULT_OK
                                                           : pv_fail(PV_ERR_NULL, "prover_run");
    if (pv_ok(r)) {
        r = prover_session_ready(s);
    }
    if (pv_ok(r) && (in->baseline == NULL || in->mode == PROVER_AUDIT)) {
        empty = model_policy_new_empty();
        r = empty != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, "empty policy");
    }
    if (pv_ok(r)) {
        tmo = in->timeout_ms ? in->timeout_ms : PROVER_DEFAULT_TIMEOUT_MS;
        pf.s = s;
        pf.ctx = s->ctx;
        /* Take the session's unit buffers (given back by proof_free). */
        pf.units = s->spare;
        memset(&s->spare, 0, sizeof(s->spare));
        pf.in = in;
        pf.B = empty != NULL ? empty : in->baseline;
        pf.C = in->candidate;
        pf.res = res;
        pf.lang_budget = PROVER_MAX_LANG_CHECKS;
        pf.deadline = t0 + (double)tmo;
        r = prove(&pf);
    }
    if (pv_ok(r)) {
        if (in->mode == PROVER_CHECK) {
            res->verdict = res->npaths > 0 ? PROVER_VERDICT_EXCEEDS : PROVER_VERDICT_WITHIN;
        } else {
            res->verdict = res->npaths > 0 ? PROVER_VERDICT_FINDINGS : PROVER_VERDICT_EMPTY;
        }
        if (res->npaths > 1) {
            qsort(res->paths, res->npaths, sizeof(*res->paths), path_cmp);
        }
    } else {
        /* Fail closed: whatever was found so far is kept as evidence. */
        res->verdict = PROVER_VERDICT_UNKNOWN;
        if (res->unknown == PROVER_UNKNOWN_NONE) {
            res->unknown = unknown_for(r.err);
        }
        if (res->npaths > 1) {
            qsort(res->paths, res->npaths, sizeof(*res->paths), path_cmp);
        }
    }
    res->nqueries = pf.nqueries;
    proof_free(&pf);
    model_policy_free(empty);
    res->elapsed_ms = prover_now_ms() - t0;
    return res;
}
