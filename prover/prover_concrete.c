/* SPDX-License-Identifier: Apache-2.0 */
/* prover_concrete.c - findings shown by concrete requests, before any
 * solver call (docs/internals/prover.md, "Concrete requests before the
 * solver"). prover_queries_concrete() builds requests from each changed
 * unit's own atoms and decides them with the concrete evaluator on both
 * policies; a request the candidate allows through the unit's endpoint
 * and the baseline does not, and that passes the witness re-check, is
 * the path a solver model would give. What it cannot settle is left to
 * prover_queries() (prover_query.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_log.h"
#include "prover/prover_int.h"
#include "prover/prover_query_int.h"

static const char example_public_ip[] = PROVER_PLACEHOLDER_IP;
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
    const char *h = prover_q_host_text(u);
    bool ex_key[PROVER_MAX_METHODS] = {false};
    bool ex_l7 =
        (none & CONC_NO_L7) != 0 || prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_L7_BYPASS,
                                                       u->bin, h, port, NULL) != NULL;
    bool ex_cr = (none & CONC_NO_CR) != 0 ||
                 prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CRED_REACH, u->bin, h, port,
                                    NULL) != NULL;
    bool ex_priv = prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_PRIVATE_REACH, u->bin, h,
                                      port, NULL) != NULL;
    bool ex_cap = (none & CONC_NO_CAP) != 0 || prover_q_reach_key_found(pf, u, port);

    for (size_t k = 0; k < pf->nmethods && !ex_cap; k++) {
        ex_key[k] = prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_CAPABILITY, u->bin, h,
                                       port, pf->methods[k]) != NULL;
    }
    return prover_q_class_left(pf, u, ex_l7, ex_cr, ex_priv,
                               ex_cap || prover_q_keys_all(pf, u, ex_key));
}

/* Has the class of category 'cat' (key 'mi' for capability) a path
 * through 'u' at 'port' already, or is it suppressed by a reach path? */
static bool conc_found(struct prover_proof *pf, const struct prover_unit *u, uint16_t port,
                       enum prover_category cat, size_t mi)
{
    const char *h = prover_q_host_text(u);

    if (cat == PROVER_CAT_CAPABILITY) {
        return prover_q_reach_key_found(pf, u, port) ||
               prover_q_path_find(pf->res, pf->path_base, cat, u->bin, h, port, pf->methods[mi]) !=
                   NULL;
    }
    return prover_q_path_find(pf->res, pf->path_base, cat, u->bin, h, port, NULL) != NULL;
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
        if (!prover_q_key_grantable(pf, u, k)) {
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
            prover_q_decide(pf->C, w, &w->d, false, &dc);
            if (!dc.allow || dc.endpoint != u->ep) {
                continue;
            }
            prover_q_decide(pf->B, w, &w->d, false, &db);
            if (db.allow) {
                continue;
            }
            n0 = pf->res->npaths;
            PV_GUARD(prover_q_wit_record(pf, cat, ui, w, &ok));
            pf->s->nconcrete += pf->res->npaths - n0;
            if (ok) {
                break;
            }
        }
    }
    return PV_RESULT_OK;
}

/* A witness of binary atom 'xa' and host atom 'ha' of unit 'u' at 'port':
 * the unit's IP literal, or the host atom's word. */
static void wit_pair(struct wit *w, const struct prover_proof *pf, const struct prover_unit *u,
                     size_t xa, size_t ha, uint16_t port)
{
    memset(w, 0, sizeof(*w));
    w->port = port;
    w->bin = pf->bin.atoms[xa].w;
    if (u->v.host_is_ip) {
        w->host_is_ip = true;
        w->d = u->v.host_ip;
        model_ip_format(&w->d, w->ipbuf, sizeof(w->ipbuf));
        w->host = w->ipbuf;
    } else {
        w->host = pf->dns.atoms[ha].w;
    }
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
            wit_pair(&w, pf, u, xa, ha, port);
            if (prover_q_reach_concrete(pf->B, &w)) {
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
    if (pf->nqkeys != 0 || prover_q_reach_key_found(pf, u, port)) {
        return PV_RESULT_OK;
    }
    if (pf->datoms == NULL) {
        PV_GUARD(prover_dest_atoms(pf));
    }
    for (size_t k = 0; k < pf->nmethods; k++) {
        bool found = false;

        if (!prover_q_key_grantable(pf, u, k) ||
            conc_found(pf, u, port, PROVER_CAT_CAPABILITY, k)) {
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
                wit_pair(&w, pf, u, xa, ha, port);
                w.xa = xa;
                w.ha = ha;
                if (!prover_q_reach_concrete(pf->B, &w)) {
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
                        prover_q_decide(pf->C, &w, &w.d, false, &dc);
                        if (!dc.allow) {
                            continue;
                        }
                        prover_q_decide(pf->B, &w, &w.d, false, &db);
                        if (db.allow) {
                            continue;
                        }
                        if (dc.endpoint != u->ep) {
                            return PV_RESULT_OK; /* u's own grant unknown */
                        }
                        PV_GUARD(prover_q_wit_record(pf, PROVER_CAT_CAPABILITY, ui, &w, &ok));
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
    bool cred = prover_q_host_any(pf, u, pf->host_cred);
    bool privc = prover_q_private_capable(u);
    struct model_ip ds[8];
    size_t nd, budget = PROVER_CONCRETE_BUDGET;

    *done = false;
    if (prover_q_host_any(pf, u, pf->host_ll) &&
        prover_q_path_find(pf->res, pf->path_base, PROVER_CAT_LINK_LOCAL, u->bin,
                           prover_q_host_text(u), port, NULL) == NULL) {
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
                } else if (!prover_q_reach_concrete(pf->B, &w)) {
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
            strcmp(prover_q_host_text(v), prover_q_host_text(u)) != 0) {
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
    const char *h = prover_q_host_text(u);

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
    if (!prover_q_shortcuts(pf) || pf->in->mode != PROVER_DELTA || pf->s->no_concrete) {
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
        prover_q_suppress(pf->res, pf->path_base);
        *done = true;
    }
    return PV_RESULT_OK;
}
