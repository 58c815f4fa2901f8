/* SPDX-License-Identifier: Apache-2.0 */
/* prover_dims.c - the dimensions of a slice: methods, query keys, destinations, ports
 *
 * Before any term is built, the encoder collects what the slice names:
 * the finite method universe (every method a rule names plus the common
 * ones plus methods named nowhere), the query keys and their value atoms,
 * the GraphQL names, and the IP literal hosts (prover_collect); then the
 * destination atoms (the 128-bit space cut at every allowed_ips bound and
 * every class the semantics distinguishes) and the port atoms. The terms
 * over these atoms are built in prover_encode.c.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

/* ---------------------------------------------------------------------------
 * Collecting the dimensions of the slice
 * ------------------------------------------------------------------------- */

static const char *const base_methods[] = {
    "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "WEBSOCKET_TEXT",
};
static const char *const other_methods[] = {"PROPFIND", "X-PROVISO-OTHER", "X-PROVISO-OTHER-2"};

size_t prover_method_index(const struct prover_proof *pf, const char *m)
{
    for (size_t i = 0; i < pf->nmethods; i++) {
        if (strcmp(pf->methods[i], m) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

static pv_result method_add(struct prover_proof *pf, const char *m) PV_WUR;
static pv_result method_add(struct prover_proof *pf, const char *m)
{
    if (m == NULL || m[0] == '\0' || strcmp(m, "*") == 0 ||
        prover_method_index(pf, m) != SIZE_MAX) {
        return PV_RESULT_OK;
    }
    PV_ENSURE(pf->nmethods < PROVER_MAX_METHODS - 1, PV_ERR_LIMIT);
    pf->methods[pf->nmethods++] = m;
    return PV_RESULT_OK;
}

static pv_result ip_atom(struct prover_proof *pf, const struct model_ip *ip, size_t *idx) PV_WUR;
static pv_result ip_atom(struct prover_proof *pf, const struct model_ip *ip, size_t *idx)
{
    for (size_t i = 0; i < pf->nips; i++) {
        if (memcmp(&pf->ips[i].ip, ip, sizeof(*ip)) == 0) {
            *idx = i;
            return PV_RESULT_OK;
        }
    }
    PV_ENSURE(pf->nips < PROVER_MAX_ATOMS, PV_ERR_LIMIT);
    PROVER_GROW(pf->ips, pf->capips, pf->nips);
    pf->ips[pf->nips].ip = *ip;
    pf->ips[pf->nips].link_local = model_ip_is_link_local(ip);
    *idx = pf->nips++;
    return PV_RESULT_OK;
}

pv_result prover_qkey_of(struct prover_proof *pf, const char *key, size_t *idx)
{
    for (size_t i = 0; i < pf->nqkeys; i++) {
        if (strcmp(pf->qkeys[i].key, key) == 0) {
            *idx = i;
            return PV_RESULT_OK;
        }
    }
    PROVER_GROW(pf->qkeys, pf->capqkeys, pf->nqkeys);
    memset(&pf->qkeys[pf->nqkeys], 0, sizeof(pf->qkeys[0]));
    pf->qkeys[pf->nqkeys].key = key;
    prover_dim_init(&pf->qkeys[pf->nqkeys].dim, MODEL_DOMAIN_QUERY_VALUE);
    *idx = pf->nqkeys++;
    return PV_RESULT_OK;
}

static pv_result collect_rule(struct prover_proof *pf, const struct model_endpoint *e, bool rpc,
                              bool deny, size_t i) PV_WUR;
static pv_result collect_rule(struct prover_proof *pf, const struct model_endpoint *e, bool rpc,
                              bool deny, size_t i)
{
    struct model_l7rule_view rv;
    size_t idx;

    if (deny) {
        model_endpoint_deny_rule(e, i, &rv);
    } else {
        model_endpoint_allow_rule(e, i, &rv);
    }
    if (rpc) {
        return PV_RESULT_OK; /* call rules: collect_rpc (their methods are no HTTP methods) */
    }
    PV_GUARD(method_add(pf, rv.method));
    if (rv.path != NULL) {
        PV_GUARD(prover_dim_add(&pf->path, rv.path, &idx));
    }
    if (rv.gql_name != NULL) {
        PV_GUARD(prover_dim_add(&pf->gname, rv.gql_name, &idx));
    }
    for (size_t j = 0; j < rv.gql_nfields; j++) {
        PV_ENSURE_REF(rv.gql_fields[j]);
        PV_GUARD(prover_dim_add(&pf->gfield, rv.gql_fields[j], &idx));
    }
    for (size_t j = 0; j < rv.nquery; j++) {
        struct model_query_view qv;
        size_t k;

        model_endpoint_rule_query(e, deny, i, j, &qv);
        PV_GUARD(prover_qkey_of(pf, qv.key, &k));
        for (size_t g = 0; g < qv.nglobs; g++) {
            PV_ENSURE_REF(qv.globs[g]);
            PV_GUARD(prover_dim_add(&pf->qkeys[k].dim, qv.globs[g], &idx));
        }
    }
    return PV_RESULT_OK;
}

bool prover_unit_gql(const struct prover_unit *u)
{
    return u->l7 && u->v.enforce &&
           (u->v.proto == MODEL_PROTO_GRAPHQL || u->v.proto == MODEL_PROTO_WEBSOCKET);
}

/* A unit that decides GraphQL operations: its registered ids, and (on the
 * baseline side) its GraphQL allow rules, which bound the field variables. */
static pv_result collect_gql(struct prover_proof *pf, const struct prover_unit *u) PV_WUR;
static pv_result collect_gql(struct prover_proof *pf, const struct prover_unit *u)
{
    pf->gql = true;
    for (size_t i = 0; i < model_endpoint_gql_npersisted(u->ep); i++) {
        const char *id = model_endpoint_gql_persisted_id(u->ep, i);
        bool seen = false;

        for (size_t k = 0; k < pf->npids && !seen && id != NULL; k++) {
            seen = strcmp(pf->pids[k], id) == 0;
        }
        if (id != NULL && !seen) {
            PROVER_GROW(pf->pids, pf->cappids, pf->npids);
            pf->pids[pf->npids++] = id;
        }
    }
    if (u->side == PROVER_SIDE_B) {
        for (size_t k = 0; k < u->v.nallow; k++) {
            struct model_l7rule_view rv;

            model_endpoint_allow_rule(u->ep, k, &rv);
            pf->nfv += rv.gql_types != 0 && rv.gql_nfields > 0;
        }
    }
    return PV_RESULT_OK;
}

bool prover_unit_rpc(const struct prover_unit *u)
{
    return u->l7 && u->v.enforce &&
           (u->v.proto == MODEL_PROTO_JSONRPC || u->v.proto == MODEL_PROTO_MCP);
}

/* Add the exact name 'm' to the call method dimension, as a glob that
 * matches only it (metacharacters escaped; the proof owns the glob). */
static pv_result rpc_literal(struct prover_proof *pf, const char *m) PV_WUR;
static pv_result rpc_literal(struct prover_proof *pf, const char *m)
{
    struct pv_dynbuf b;
    struct model_glob *g;
    const char *why = NULL;
    size_t idx;
    void *grown;
    pv_result r = PV_RESULT_OK;

    pv_dynbuf_init(&b, 4 * MODEL_RPC_MAX_NAME + 16);
    for (const char *c = m; *c != '\0' && pv_ok(r); c++) {
        if (strchr("*?[]{}\\", *c) != NULL) {
            r = pv_dynbuf_addc(&b, '\\');
        }
        if (pv_ok(r)) {
            r = pv_dynbuf_addc(&b, *c);
        }
    }
    if (pv_ok(r)) {
        r = pv_dynbuf_addstr(&b, "");
    }
    if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return r;
    }
    if (prover_map_get(&pf->rmeth.index, b.buf, b.len, &idx)) {
        pv_dynbuf_free(&b);
        return PV_RESULT_OK;
    }
    g = model_glob_compile(MODEL_GLOB_VALUE, b.buf, b.len, &why);
    pv_dynbuf_free(&b);
    PV_GUARD_PTR(g);
    grown = prover_grow(pf->rglobs, &pf->caprglobs, pf->nrglobs, sizeof(*pf->rglobs));
    if (grown == NULL) {
        model_glob_free(g);
        PV_BAIL(PV_ERR_NOMEM);
    }
    pf->rglobs = grown;
    pf->rglobs[pf->nrglobs++] = g;
    return prover_dim_add(&pf->rmeth, g, &idx);
}

/* A unit that decides calls: the method and tool patterns of its rules
 * (docs/semantics.md#rpc-rules). The profile and the reserved names are
 * added once (collect_rpc_names). */
static pv_result collect_rpc(struct prover_proof *pf, const struct prover_unit *u) PV_WUR;
static pv_result collect_rpc(struct prover_proof *pf, const struct prover_unit *u)
{
    bool mcp = u->v.proto == MODEL_PROTO_MCP;
    size_t idx;

    pf->rpc = true;
    pf->rpc_json = pf->rpc_json || !mcp;
    for (size_t k = 0; k < u->v.nallow + u->v.ndeny; k++) {
        struct model_l7rule_view rv;

        if (k < u->v.nallow) {
            model_endpoint_allow_rule(u->ep, k, &rv);
        } else {
            model_endpoint_deny_rule(u->ep, k - u->v.nallow, &rv);
        }
        if (rv.method != NULL && rv.method[0] != '\0') {
            if (mcp && rv.rpc_method_glob != NULL) {
                PV_GUARD(prover_dim_add(&pf->rmeth, rv.rpc_method_glob, &idx));
            } else if (!mcp && strcmp(rv.method, "*") != 0) {
                PV_GUARD(rpc_literal(pf, rv.method));
            }
        }
        for (size_t j = 0; rv.rpc_tools != NULL && j < rv.rpc_ntools; j++) {
            if (rv.rpc_tools[j] != NULL) {
                PV_GUARD(prover_dim_add(&pf->rtool, rv.rpc_tools[j], &idx));
            }
        }
    }
    return PV_RESULT_OK;
}

/* The names every slice with calls tells apart: each method of the MCP
 * profile (the transport's rpc.* names among them), tools/call (what a
 * rule with a tool selector and no method means), and every name that
 * begins "rpc." (which no message may use, docs/semantics.md#rpc). */
static pv_result collect_rpc_names(struct prover_proof *pf) PV_WUR;
static pv_result collect_rpc_names(struct prover_proof *pf)
{
    struct model_glob *g;
    const char *why = NULL;
    const char *m;
    void *grown;
    size_t idx;

    for (size_t i = 0; (m = model_rpc_mcp_known_at(i)) != NULL; i++) {
        PV_GUARD(rpc_literal(pf, m));
    }
    PV_GUARD(rpc_literal(pf, "tools/call"));
    g = model_glob_compile(MODEL_GLOB_VALUE, "rpc.*", 5, &why);
    PV_GUARD_PTR(g);
    grown = prover_grow(pf->rglobs, &pf->caprglobs, pf->nrglobs, sizeof(*pf->rglobs));
    if (grown == NULL) {
        model_glob_free(g);
        PV_BAIL(PV_ERR_NOMEM);
    }
    pf->rglobs = grown;
    pf->rglobs[pf->nrglobs++] = g;
    return prover_dim_add(&pf->rmeth, g, &idx);
}

/* The methods, and every pattern of the relevant units (binary, host,
 * path scope, rules, GraphQL names), and the registry's BypassL7 binaries. */
static pv_result collect_units(struct prover_proof *pf) PV_WUR;
static pv_result collect_units(struct prover_proof *pf)
{
    const struct model_registry *reg = pf->in->reg;
    size_t idx;
    bool rpc;

    for (size_t i = 0; i < PV_ARRAY_LEN(base_methods); i++) {
        PV_GUARD(method_add(pf, base_methods[i]));
    }
    PV_GUARD(prover_dim_add_special(&pf->path, &pf->path_2f));
    for (size_t i = 0; i < pf->units.n; i++) {
        struct prover_unit *u = &pf->units.u[i];

        if (!u->rel) {
            continue;
        }
        PV_GUARD(prover_dim_add(&pf->bin, u->bglob, &u->bpat));
        if (u->v.host != NULL && u->v.host_is_ip) {
            PV_GUARD(ip_atom(pf, &u->v.host_ip, &u->hip));
        } else if (u->v.host != NULL) {
            PV_GUARD(prover_dim_add(&pf->dns, u->v.host_glob, &u->hpat));
        }
        if (u->v.path_scope != NULL) {
            PV_GUARD(prover_dim_add(&pf->path, u->v.path_scope, &u->spat));
        }
        rpc = u->v.proto == MODEL_PROTO_JSONRPC || u->v.proto == MODEL_PROTO_MCP;
        for (size_t k = 0; k < u->v.nallow; k++) {
            PV_GUARD(collect_rule(pf, u->ep, rpc, false, k));
        }
        for (size_t k = 0; k < u->v.ndeny; k++) {
            PV_GUARD(collect_rule(pf, u->ep, rpc, true, k));
        }
        if (prover_unit_gql(u)) {
            PV_GUARD(collect_gql(pf, u));
        }
        if (prover_unit_rpc(u)) {
            PV_GUARD(collect_rpc(pf, u));
        }
    }
    if (pf->rpc) {
        PV_GUARD(collect_rpc_names(pf));
    }
    if (pf->gql) {
        PV_GUARD(method_add(pf, "GET"));
        PV_GUARD(method_add(pf, "POST"));
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(other_methods); i++) {
        if (prover_method_index(pf, other_methods[i]) == SIZE_MAX) {
            PV_GUARD(method_add(pf, other_methods[i]));
            break;
        }
    }
    /*= docs/semantics.md#binary-classes
     *# an entry with a protocol that `bypasses_l7` (git, ssh, nc, ...) puts
     *# every matching path in **BypassL7**. */
    for (size_t i = 0; reg != NULL && i < model_registry_nbinaries(reg); i++) {
        if (model_registry_binary_bypasses_l7(reg, i)) {
            PV_GUARD(prover_dim_add(&pf->bin, model_registry_binary_glob(reg, i), &idx));
            PROVER_GROW(pf->bypass_pats, pf->capbypass, pf->nbypass);
            pf->bypass_pats[pf->nbypass++] = idx;
        }
    }
    return PV_RESULT_OK;
}

/* The credential targets that meet a host of the slice; '*hostless' tells
 * whether the slice has a hostless unit. */
static pv_result collect_creds(struct prover_proof *pf, bool *hostless) PV_WUR;
static pv_result collect_creds(struct prover_proof *pf, bool *hostless)
{
    const struct model_credset *cs = pf->in->creds;
    size_t idx;
    size_t *rel;
    size_t nrel = 0;
    pv_result r = PV_RESULT_OK;

    *hostless = false;
    /*= docs/semantics.md#credentials
     *# A request host *h* is **credentialed** when it matches some target of
     *# some credential. */
    pf->ncredt = 0;
    for (size_t i = 0; cs != NULL && i < model_credset_count(cs); i++) {
        pf->ncredt += model_cred_ntargets(cs, i);
    }
    pf->cred_pats = pv_calloc(pf->ncredt + 1, sizeof(size_t));
    pf->cred_ips = pv_calloc(pf->ncredt + 1, sizeof(size_t));
    pf->cred_of = pv_calloc(pf->ncredt + 1, sizeof(size_t));
    PV_ENSURE(pf->cred_pats != NULL && pf->cred_ips != NULL && pf->cred_of != NULL, PV_ERR_NOMEM);
    if (pf->ct_isip == NULL) {
        /* parse the targets once per proof, not once per part */
        pf->ct_isip = pv_calloc(pf->ncredt + 1, 1);
        pf->ct_ip = pv_calloc(pf->ncredt + 1, sizeof(struct model_ip));
        PV_ENSURE(pf->ct_isip != NULL && pf->ct_ip != NULL, PV_ERR_NOMEM);
        idx = 0;
        for (size_t i = 0; cs != NULL && i < model_credset_count(cs); i++) {
            for (size_t j = 0; j < model_cred_ntargets(cs, i); j++, idx++) {
                const struct model_glob *g = model_cred_target(cs, i, j);
                const char *t = g != NULL ? model_glob_text(g) : NULL;

                pf->ct_isip[idx] =
                    t != NULL && model_ip_parse_strict(t, strlen(t), &pf->ct_ip[idx]) ? 1 : 0;
            }
        }
    }
    idx = 0;
    rel = pv_calloc(pf->units.nrel + 1, sizeof(size_t));
    PV_GUARD_PTR(rel);
    for (size_t i = 0; i < pf->units.n; i++) {
        if (pf->units.u[i].rel && nrel < pf->units.nrel) {
            rel[nrel++] = i;
            *hostless = *hostless || pf->units.u[i].v.host == NULL;
        }
    }
    for (size_t i = 0; cs != NULL && i < model_credset_count(cs); i++) {
        for (size_t j = 0; j < model_cred_ntargets(cs, i); j++, idx++) {
            const struct model_glob *g = model_cred_target(cs, i, j);
            const char *t = g != NULL ? model_glob_text(g) : NULL;
            struct model_ip ip;
            bool is_ip;
            bool relevant = *hostless;

            pf->cred_pats[idx] = SIZE_MAX;
            pf->cred_ips[idx] = SIZE_MAX;
            pf->cred_of[idx] = i;
            if (t == NULL || t[0] == '\0') {
                continue;
            }
            if (idx % 64 == 0 && prover_now_ms() > pf->deadline) {
                /* targets x slice units: bound it by the proof's deadline */
                free(rel);
                PV_BAIL(PV_ERR_TIMEOUT);
            }
            is_ip = pf->ct_isip[idx] != 0;
            ip = pf->ct_ip[idx];
            /* Only targets that meet a host of the slice can make a host
             * atom credentialed; the others would only add atoms. */
            for (size_t k = 0; k < nrel && !relevant && pv_ok(r); k++) {
                const struct prover_unit *u = &pf->units.u[rel[k]];

                if (u->v.host == NULL || u->v.host_is_ip != is_ip) {
                    continue;
                }
                if (is_ip) {
                    relevant = memcmp(&ip, &u->v.host_ip, sizeof(ip)) == 0;
                } else {
                    r = prover_glob_overlap(g, u->v.host_glob, MODEL_DOMAIN_DNS_NAME,
                                            &pf->lang_budget, &relevant);
                }
            }
            if (pv_ok(r) && relevant) {
                /* IP hosts are credentialed by exact literal targets only. */
                r = is_ip ? ip_atom(pf, &ip, &pf->cred_ips[idx])
                          : prover_dim_add(&pf->dns, g, &pf->cred_pats[idx]);
            }
            if (!pv_ok(r)) {
                free(rel);
                return r;
            }
        }
    }
    free(rel);
    return PV_RESULT_OK;
}

/* The metadata host names a host pattern of the slice covers (all of them
 * when the slice is 'hostless'). */
static pv_result collect_meta(struct prover_proof *pf, bool hostless) PV_WUR;
static pv_result collect_meta(struct prover_proof *pf, bool hostless)
{
    const char *const *meta = model_metadata_names();
    size_t idx;

    /*= docs/semantics.md#link-local
     *# A host is **link-local** when it is an IP host in a link-local range
     *# (any of the forms above) or a known metadata host name */
    /* A metadata name gets an atom of its own when some host pattern of the
     * slice covers it, or when the slice has a hostless unit (which matches
     * every host but the link-local ones): every host atom is then either
     * wholly link-local or not at all. */
    for (size_t i = 0; meta[i] != NULL && pf->nmeta < PV_ARRAY_LEN(pf->meta); i++) {
        bool covered = hostless;

        for (size_t k = 0; k < pf->dns.npats && !covered; k++) {
            covered = prover_pat_match(&pf->dns.pats[k], meta[i], strlen(meta[i]));
        }
        if (covered) {
            const char *why = NULL;
            struct model_glob *g =
                model_glob_compile(MODEL_GLOB_HOST, meta[i], strlen(meta[i]), &why);

            PV_GUARD_PTR(g);
            pf->meta[pf->nmeta++] = g;
            PV_GUARD(prover_dim_add(&pf->dns, g, &idx));
        }
    }
    return PV_RESULT_OK;
}

pv_result prover_collect(struct prover_proof *pf)
{
    bool hostless;

    PV_GUARD(collect_units(pf));
    PV_GUARD(collect_creds(pf, &hostless));
    PV_GUARD(collect_meta(pf, hostless));
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Destinations
 * ------------------------------------------------------------------------- */

static int ip_cmp(const void *a, const void *b)
{
    return memcmp(((const struct model_ip *)a)->b, ((const struct model_ip *)b)->b, 16);
}

/* last address of a CIDR */
static struct model_ip cidr_end(const struct model_cidr *c)
{
    struct model_ip e = c->net;
    unsigned bit = c->prefix;

    if (bit < 128 && bit % 8 != 0) {
        e.b[bit / 8] |= (uint8_t)(0xffu >> (bit % 8));
        bit += 8 - bit % 8;
    }
    if (bit < 128) {
        memset(e.b + bit / 8, 0xff, 16 - bit / 8);
    }
    return e;
}

/* a + 1; false on overflow */
static bool ip_inc(struct model_ip *a)
{
    for (int i = 15; i >= 0; i--) {
        if (++a->b[i] != 0) {
            return true;
        }
    }
    return false;
}

/* The big-endian 64-bit word at 'p'. */
static uint64_t be64(const uint8_t *p)
{
    return ((uint64_t)p[0] << 56) | ((uint64_t)p[1] << 48) | ((uint64_t)p[2] << 40) |
           ((uint64_t)p[3] << 32) | ((uint64_t)p[4] << 24) | ((uint64_t)p[5] << 16) |
           ((uint64_t)p[6] << 8) | (uint64_t)p[7];
}

/* a <= b as 128-bit big-endian numbers (memcmp(a, b, 16) <= 0). */
static bool ip_le(const struct model_ip *a, const struct model_ip *b)
{
    uint64_t a0 = be64(a->b);
    uint64_t b0 = be64(b->b);

    return a0 != b0 ? a0 < b0 : be64(a->b + 8) <= be64(b->b + 8);
}

/* Is 'a' in [c->net, end], 'end' being cidr_end(c) computed once by the caller? */
static bool in_cidr_c(const struct model_cidr *c, const struct model_ip *end,
                      const struct model_ip *a)
{
    return ip_le(&c->net, a) && ip_le(a, end);
}

struct bounds {
    struct model_ip *v;
    size_t n, cap;
};

static pv_result bound_add(struct bounds *b, const struct model_ip *a) PV_WUR;
static pv_result bound_add(struct bounds *b, const struct model_ip *a)
{
    PROVER_GROW(b->v, b->cap, b->n);
    b->v[b->n++] = *a;
    return PV_RESULT_OK;
}

static pv_result bound_cidr(struct bounds *b, const struct model_cidr *c) PV_WUR;
static pv_result bound_cidr(struct bounds *b, const struct model_cidr *c)
{
    struct model_ip e = cidr_end(c);

    PV_GUARD(bound_add(b, &c->net));
    if (ip_inc(&e)) {
        PV_GUARD(bound_add(b, &e));
    }
    return PV_RESULT_OK;
}

/* The fixed tables (always-blocked, private, link-local) cut the address
 * line into intervals on which the three classes are constant: the sorted
 * starts of those intervals with the classes of each, built once per
 * process. Every boundary of a table is a start, so a point has the classes
 * of the last start at or below it. Without the table (its allocation
 * failed) the classes are read off the tables themselves. */
struct class_cut {
    struct model_ip start;
    bool blocked, priv, ll;
};

static struct class_cut *cuts;
static size_t ncuts;
static pthread_once_t cuts_once = PTHREAD_ONCE_INIT;

/* The classes of address 'st' from the tables (the first interval of an
 * always-blocked range is not private, as model_ip_is_private). */
static void classes_of(const struct model_ip *st, bool *blocked, bool *priv, bool *ll)
{
    const struct model_cidr *tb = NULL;
    const struct model_cidr *tp = NULL;
    const struct model_cidr *tl = NULL;
    size_t nb = model_ip_class_ranges(MODEL_IPC_BLOCKED, &tb);
    size_t np = model_ip_class_ranges(MODEL_IPC_PRIVATE, &tp);
    size_t nl = model_ip_class_ranges(MODEL_IPC_LINK_LOCAL, &tl);

    *blocked = *priv = *ll = false;
    for (size_t t = 0; t < nb && !*blocked; t++) {
        struct model_ip e = cidr_end(&tb[t]);

        *blocked = in_cidr_c(&tb[t], &e, st);
    }
    for (size_t t = 0; t < np && !*blocked && !*priv; t++) {
        struct model_ip e = cidr_end(&tp[t]);

        *priv = in_cidr_c(&tp[t], &e, st);
    }
    for (size_t t = 0; t < nl && !*ll; t++) {
        struct model_ip e = cidr_end(&tl[t]);

        *ll = in_cidr_c(&tl[t], &e, st);
    }
}

static void cuts_build(void)
{
    const struct model_cidr *tab[3] = {NULL, NULL, NULL};
    size_t nt[3];
    struct bounds b = {0};
    struct model_ip zero;
    pv_result r;
    size_t k = 0;

    nt[0] = model_ip_class_ranges(MODEL_IPC_BLOCKED, &tab[0]);
    nt[1] = model_ip_class_ranges(MODEL_IPC_PRIVATE, &tab[1]);
    nt[2] = model_ip_class_ranges(MODEL_IPC_LINK_LOCAL, &tab[2]);
    memset(&zero, 0, sizeof(zero));
    r = bound_add(&b, &zero);
    for (size_t i = 0; i < 3; i++) {
        for (size_t t = 0; t < nt[i] && pv_ok(r); t++) {
            r = bound_cidr(&b, &tab[i][t]);
        }
    }
    if (pv_ok(r)) {
        cuts = pv_calloc(b.n, sizeof(*cuts));
    }
    if (cuts == NULL) {
        free(b.v);
        return;
    }
    qsort(b.v, b.n, sizeof(b.v[0]), ip_cmp);
    for (size_t i = 0; i < b.n; i++) {
        if (k == 0 || memcmp(cuts[k - 1].start.b, b.v[i].b, 16) != 0) {
            cuts[k].start = b.v[i];
            classes_of(&b.v[i], &cuts[k].blocked, &cuts[k].priv, &cuts[k].ll);
            k++;
        }
    }
    ncuts = k;
    free(b.v);
}

/* The classes of address 'st': by the cuts (binary search), else from the
 * tables. */
static void classes(const struct model_ip *st, bool *blocked, bool *priv, bool *ll)
{
    size_t lo = 0, hi;

    (void)pthread_once(&cuts_once, cuts_build);
    if (ncuts == 0) {
        classes_of(st, blocked, priv, ll);
        return;
    }
    /* the last cut whose start is <= st (cuts[0] starts at ::) */
    hi = ncuts;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;

        if (ip_le(&cuts[mid].start, st)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *blocked = cuts[lo].blocked;
    *priv = cuts[lo].priv;
    *ll = cuts[lo].ll;
}

static size_t cidr_index(const struct prover_proof *pf, const struct model_cidr *c)
{
    for (size_t i = 0; i < pf->ncidrs; i++) {
        if (pf->cidrs[i].prefix == c->prefix && memcmp(pf->cidrs[i].net.b, c->net.b, 16) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Is 'a' inside ::ffff:0:0/96 (an IPv4 address, readable as a witness)? */
static bool ip_v4(const struct model_ip *a)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return memcmp(a->b, pre, 12) == 0;
}

/* long: one sweep: the bounds of every class and CIDR, sorted, then one atom per interval,
 * classified against the same range ends and bit buffer */
pv_result prover_dest_atoms(struct prover_proof *pf)
{
    const struct model_cidr *tb = NULL;
    const struct model_cidr *tp = NULL;
    const struct model_cidr *tl = NULL;
    size_t nb = model_ip_class_ranges(MODEL_IPC_BLOCKED, &tb);
    size_t np = model_ip_class_ranges(MODEL_IPC_PRIVATE, &tp);
    size_t nl = model_ip_class_ranges(MODEL_IPC_LINK_LOCAL, &tl);
    struct bounds b = {0};
    struct model_ip zero;
    pv_result r = PV_RESULT_OK;
    size_t k = 0;
    size_t cap = 0;
    uint64_t *bits = NULL;
    struct model_ip *ends = NULL;

    memset(&zero, 0, sizeof(zero));
    for (size_t i = 0; i < pf->units.n && pv_ok(r); i++) {
        const struct prover_unit *u = &pf->units.u[i];

        for (size_t c = 0; u->rel && c < u->v.ncidrs; c++) {
            if (cidr_index(pf, &u->v.cidrs[c]) == SIZE_MAX) {
                PROVER_GROW(pf->cidrs, pf->capcidrs, pf->ncidrs);
                pf->cidrs[pf->ncidrs++] = u->v.cidrs[c];
            }
        }
    }
    pf->cwords = pf->ncidrs / 64 + 1;
    r = bound_add(&b, &zero);
    for (size_t i = 0; i < nb && pv_ok(r); i++) {
        r = bound_cidr(&b, &tb[i]);
    }
    for (size_t i = 0; i < np && pv_ok(r); i++) {
        r = bound_cidr(&b, &tp[i]);
    }
    for (size_t i = 0; i < nl && pv_ok(r); i++) {
        r = bound_cidr(&b, &tl[i]);
    }
    for (size_t i = 0; i < pf->ncidrs && pv_ok(r); i++) {
        r = bound_cidr(&b, &pf->cidrs[i]);
    }
    for (size_t i = 0; i < pf->nips && pv_ok(r); i++) {
        struct model_cidr pt;

        pt.net = pf->ips[i].ip;
        pt.prefix = 128;
        r = bound_cidr(&b, &pt);
    }
    bits = pv_calloc(pf->cwords, sizeof(uint64_t));
    ends = pv_calloc(nb + np + pf->ncidrs + 1, sizeof(*ends));
    if (!pv_ok(r) || bits == NULL || ends == NULL) {
        free(b.v);
        free(bits);
        free(ends);
        PV_BAIL(pv_ok(r) ? PV_ERR_NOMEM : r.err);
    }
    for (size_t i = 0; i < nb; i++) {
        ends[i] = cidr_end(&tb[i]);
    }
    for (size_t i = 0; i < np; i++) {
        ends[nb + i] = cidr_end(&tp[i]);
    }
    for (size_t i = 0; i < pf->ncidrs; i++) {
        ends[nb + np + i] = cidr_end(&pf->cidrs[i]);
    }
    qsort(b.v, b.n, sizeof(b.v[0]), ip_cmp);
    for (size_t i = 0; i < b.n; i++) {
        if (k == 0 || memcmp(b.v[k - 1].b, b.v[i].b, 16) != 0) {
            b.v[k++] = b.v[i];
        }
    }
    for (size_t i = 0; i < k && pv_ok(r); i++) {
        const struct model_ip *st = &b.v[i];
        struct model_ip w = *st;
        bool blocked = false;
        bool priv = false;
        bool ll = false;
        size_t lit = SIZE_MAX;
        size_t g;

        memset(bits, 0, pf->cwords * sizeof(uint64_t));
        classes(st, &blocked, &priv, &ll);
        for (size_t c = 0; c < pf->ncidrs; c++) {
            if (in_cidr_c(&pf->cidrs[c], &ends[nb + np + c], st)) {
                bits[c / 64] |= (uint64_t)1 << (c % 64);
            }
        }
        for (size_t l = 0; l < pf->nips && lit == SIZE_MAX; l++) {
            if (memcmp(pf->ips[l].ip.b, st->b, 16) == 0) {
                lit = l;
            }
        }
        /* A readable member: start + 1 when the interval has more than one
         * address (10.0.0.1 rather than the network address 10.0.0.0). */
        if (lit != SIZE_MAX || !ip_inc(&w) || (i + 1 < k && memcmp(w.b, b.v[i + 1].b, 16) >= 0)) {
            w = *st;
        }
        for (g = 0; g < pf->ndatoms; g++) {
            const struct prover_datom *a = &pf->datoms[g];

            if (a->blocked == blocked && a->priv == priv && a->ll == ll && a->lit == lit &&
                memcmp(a->cidrs, bits, pf->cwords * sizeof(uint64_t)) == 0) {
                break;
            }
        }
        if (g == pf->ndatoms) {
            void *ng = prover_grow(pf->datoms, &cap, pf->ndatoms, sizeof(*pf->datoms));
            struct prover_datom *a;

            if (ng == NULL) {
                r = pv_fail(PV_ERR_NOMEM, "datoms");
                break;
            }
            pf->datoms = ng;
            a = &pf->datoms[pf->ndatoms++];
            a->w = w;
            a->blocked = blocked;
            a->priv = priv;
            a->ll = ll;
            a->lit = lit;
            a->cidrs = pv_malloc(pf->cwords * sizeof(uint64_t));
            if (a->cidrs == NULL) {
                pf->ndatoms--;
                r = pv_fail(PV_ERR_NOMEM, "datoms");
                break;
            }
            memcpy(a->cidrs, bits, pf->cwords * sizeof(uint64_t));
        } else if (!ip_v4(&pf->datoms[g].w) && ip_v4(&w)) {
            pf->datoms[g].w = w;
        }
    }
    free(b.v);
    free(bits);
    free(ends);
    PV_GUARD(r);
    for (size_t a = 0; a < pf->ndatoms; a++) {
        if (pf->datoms[a].lit != SIZE_MAX) {
            pf->ips[pf->datoms[a].lit].datom = a;
        }
    }
    return PV_RESULT_OK;
}

pv_result prover_port_atoms(struct prover_proof *pf)
{
    size_t cap = 0;

    for (size_t i = 0; i < pf->units.n; i++) {
        const struct prover_unit *u = &pf->units.u[i];

        for (size_t k = 0; u->rel && k < u->v.nports; k++) {
            bool seen = false;

            for (size_t j = 0; j < pf->nports && !seen; j++) {
                seen = pf->ports[j] == u->v.ports[k];
            }
            if (!seen) {
                PROVER_GROW(pf->ports, cap, pf->nports);
                pf->ports[pf->nports++] = u->v.ports[k];
            }
        }
    }
    PV_ENSURE(pf->nports > 0, PV_ERR_INTERNAL);
    return PV_RESULT_OK;
}

/* Pattern 'pat' of dimension 'd': its atoms, built once per pattern. */
Z3_ast prover_memb(struct prover_proof *pf, struct prover_dim *d, size_t pat)
{
    bool *has;
    Z3_ast r;

    if (pat >= d->npats) {
        pf->zerr = true;
        return NULL;
    }
    if (d->memb == NULL) {
        d->memb = pv_calloc(d->npats ? d->npats : 1, sizeof(Z3_ast));
        if (d->memb == NULL) {
            pf->zerr = pf->znomem = true;
            return NULL;
        }
    }
    if (d->memb[pat] != NULL) {
        return d->memb[pat];
    }
    has = pv_calloc(d->natoms ? d->natoms : 1, sizeof(bool));
    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < d->natoms; a++) {
        has[a] = prover_atom_has(d, a, pat);
    }
    r = prover_in_set(pf, d->var, d->natoms, has, 0, d != &pf->dns);
    free(has);
    d->memb[pat] = r;
    return r;
}

Z3_ast prover_port_eq(struct prover_proof *pf, uint16_t port)
{
    for (size_t i = 0; i < pf->nports; i++) {
        if (pf->ports[i] == port) {
            return prover_eqn(pf, pf->p, i);
        }
    }
    return prover_false(pf);
}

/* d in CIDR 'c': the atoms inside it. */
Z3_ast prover_in_cidr(struct prover_proof *pf, const struct model_cidr *c)
{
    size_t ci = cidr_index(pf, c);
    bool *has;
    Z3_ast r;

    if (ci == SIZE_MAX) {
        pf->zerr = true;
        return NULL;
    }
    has = pv_calloc(pf->ndatoms, sizeof(bool));
    if (has == NULL) {
        pf->zerr = pf->znomem = true;
        return NULL;
    }
    for (size_t a = 0; a < pf->ndatoms; a++) {
        has[a] = (pf->datoms[a].cidrs[ci / 64] >> (ci % 64)) & 1u;
    }
    r = prover_in_set(pf, pf->d, pf->ndatoms, has, 0, true);
    free(has);
    return r;
}
