/* SPDX-License-Identifier: Apache-2.0 */
/* model_index.c - the evaluator's host/port index: build, lookup, free
 *
 * struct model_index (model_int.h) turns a request's (host, port) into the
 * few (rule, endpoint) pairs that can match it: exact hosts and IP literals
 * sit in one open-addressing hash table, wildcard hosts are bucketed in the
 * same table under their literal label suffix ("*.github.com" under
 * "github.com"), and hostless endpoints form a list. model_policy_compile()
 * (model_compile.c) builds it once the patterns are compiled; model_decide()
 * (model_eval.c) reads it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* ===========================================================================
 * The index
 * ========================================================================= */

static uint64_t fnv1a(uint32_t tag, const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;

    h ^= tag;
    h *= 0x100000001b3u;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)s[i];
        h *= 0x100000001b3u;
    }
    return h;
}

const struct ix_slot *model_ix_lookup(const struct model_index *ix, uint32_t tag, const char *key,
                                      size_t klen)
{
    uint64_t h;
    size_t mask;
    size_t i;

    if (ix->nslots == 0) {
        return NULL;
    }
    h = fnv1a(tag, key, klen);
    mask = ix->nslots - 1;
    i = (size_t)h & mask;
    for (size_t n = 0; n < ix->nslots; n++) {
        const struct ix_slot *s = &ix->slots[i];
        if (s->count == 0) {
            return NULL;
        }
        if (s->h == h && s->tag == tag && s->klen == klen && memcmp(s->key, key, klen) == 0) {
            return s;
        }
        i = (i + 1) & mask;
    }
    return NULL;
}

static bool is_host_meta(char ch)
{
    return ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '{' || ch == '}' || ch == '\\';
}

/* The literal label suffix of a wildcard host: the labels after the last
 * label holding a metacharacter ("github.com" for "*-api.github.com"). */
static void wild_suffix(const char *s, size_t len, size_t *off, size_t *slen)
{
    size_t label = 0;
    size_t start = len; /* no suffix */

    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            bool meta = false;
            for (size_t j = label; j < i; j++) {
                if (is_host_meta(s[j])) {
                    meta = true;
                    break;
                }
            }
            if (meta) {
                start = i < len ? i + 1 : len;
            }
            label = i + 1;
        }
    }
    *off = start;
    *slen = len - start;
}

/* Bit of suffix_labels for a name of 'len' bytes: its label count, capped. */
unsigned model_label_bit(const char *s, size_t len)
{
    unsigned n = 1;

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.' && n < 63) {
            n++;
        }
    }
    return n;
}

/* --- index construction --------------------------------------------------- */

struct ix_rec {
    uint64_t h;
    const char *key;
    uint32_t klen;
    uint32_t tag;
    uint32_t ep;
};

static int rec_cmp(const void *a, const void *b)
{
    const struct ix_rec *x = a;
    const struct ix_rec *y = b;
    int c;

    if (x->h != y->h) {
        return x->h < y->h ? -1 : 1;
    }
    if (x->tag != y->tag) {
        return x->tag < y->tag ? -1 : 1;
    }
    if (x->klen != y->klen) {
        return x->klen < y->klen ? -1 : 1;
    }
    c = memcmp(x->key, y->key, x->klen);
    if (c != 0) {
        return c;
    }
    return x->ep < y->ep ? -1 : (x->ep > y->ep ? 1 : 0);
}

static bool rec_same_key(const struct ix_rec *x, const struct ix_rec *y)
{
    return x->h == y->h && x->tag == y->tag && x->klen == y->klen &&
           memcmp(x->key, y->key, x->klen) == 0;
}

static enum ix_grant classify_grant(const struct model_endpoint *e, bool l7)
{
    if (!l7) {
        return IXG_L4;
    }
    /*= docs/semantics.md#audit
     *# its endpoint is L7 and not enforced — `enforcement` is anything but
     *# `enforce`, including absent — (**audit mode**): every request. */
    if (!e->enforce) {
        return IXG_AUDIT;
    }
    if (e->proto == MODEL_PROTO_REST || e->proto == MODEL_PROTO_WEBSOCKET) {
        return IXG_RULES;
    }
    /*= docs/semantics.md#grant
     *# its endpoint is enforced `graphql`: the request is a GraphQL operation and
     *# some GraphQL allow rule matches it (#graphql); */
    if (e->proto == MODEL_PROTO_GRAPHQL) {
        return IXG_GRAPHQL;
    }
    /*= docs/semantics.md#grant
     *# its endpoint is enforced `json-rpc` or `mcp`: the request is one call
     *# and the endpoint's call rules grant it (#rpc); */
    if (e->proto == MODEL_PROTO_JSONRPC || e->proto == MODEL_PROTO_MCP) {
        return IXG_RPC;
    }
    /*= docs/semantics.md#unsupported
     *# its endpoint is enforced `sql`: **nothing**. */
    return IXG_UNSUPPORTED;
}

bool model_protocol_is_l7(enum model_protocol proto)
{
    switch (proto) {
    case MODEL_PROTO_REST:
    case MODEL_PROTO_WEBSOCKET:
    case MODEL_PROTO_GRAPHQL:
    case MODEL_PROTO_SQL:
    case MODEL_PROTO_JSONRPC:
    case MODEL_PROTO_MCP:
        return true;
    case MODEL_PROTO_NONE:
    case MODEL_PROTO_TCP:
        return false;
    }
    return false;
}

static int bin_cmp(const void *a, const void *b)
{
    const struct ix_bin *const *x = a;
    const struct ix_bin *const *y = b;
    int c = strcmp((*x)->s, (*y)->s);

    if (c != 0) {
        return c;
    }
    return *x < *y ? -1 : (*x > *y ? 1 : 0);
}

/* Identical binary patterns (common across rules) share one automaton, so
 * a decision touches fewer distinct tables. */
static pv_result index_share_bins(struct model_index *ix, size_t nb)
{
    PV_DEFER(struct ix_bin * *v, pv_free_p) = NULL;

    if (nb < 2) {
        return PV_RESULT_OK;
    }
    v = pv_calloc(nb, sizeof(*v));
    PV_GUARD_PTR(v);
    for (size_t i = 0; i < nb; i++) {
        v[i] = &ix->bins[i];
    }
    qsort(v, nb, sizeof(*v), bin_cmp);
    for (size_t i = 1; i < nb; i++) {
        if (strcmp(v[i]->s, v[i - 1]->s) == 0) {
            v[i]->g = v[i - 1]->g;
        }
    }
    return PV_RESULT_OK;
}

enum ix_host_kind model_ix_host_kind(const struct model_endpoint *e)
{
    if (e->host.s == NULL || e->host.s[0] == '\0') {
        return (e->ncidrs > 0 || model_endpoint_peer_state(e) == MODEL_PEER_UNRESOLVED)
                   ? IXH_HOSTLESS
                   : IXH_NONE;
    }
    if (e->host_is_ip) {
        return IXH_IP;
    }
    return strchr(e->host.s, '*') == NULL ? IXH_EXACT : IXH_WILD;
}

static pv_result index_fill_eps(struct model_index *ix, const struct model_policy *p)
{
    size_t n = 0;
    size_t nb = 0;

    for (size_t r = 0; r < p->nrules; r++) {
        n += p->rules[r].nendpoints;
        nb += p->rules[r].nbinaries;
    }
    PV_ENSURE(n < EVAL_NONE && p->nrules < EVAL_NONE, PV_ERR_LIMIT);
    ix->eps = pv_calloc(n > 0 ? n : 1, sizeof(*ix->eps));
    PV_GUARD_PTR(ix->eps);
    ix->bins = pv_calloc(nb > 0 ? nb : 1, sizeof(*ix->bins));
    PV_GUARD_PTR(ix->bins);
    ix->rule_bin = pv_calloc(p->nrules + 1, sizeof(*ix->rule_bin));
    PV_GUARD_PTR(ix->rule_bin);
    ix->nrules = p->nrules;
    nb = 0;
    for (size_t r = 0; r < p->nrules; r++) {
        const struct model_rule *rule = &p->rules[r];
        ix->rule_bin[r] = nb;
        for (size_t b = 0; b < rule->nbinaries; b++) {
            const struct model_binary *bin = &rule->binaries[b];
            if (bin->path.s == NULL) {
                continue;
            }
            ix->bins[nb].s = bin->path.s;
            ix->bins[nb].len = strlen(bin->path.s);
            ix->bins[nb].g =
                (bin->glob != NULL && !model_glob_is_literal(bin->glob)) ? bin->glob : NULL;
            nb++;
        }
        for (size_t i = 0; i < rule->nendpoints; i++) {
            const struct model_endpoint *e = &rule->endpoints[i];
            struct ix_ep *x = &ix->eps[ix->neps++];
            enum model_peer_state peer;
            x->rule = rule;
            x->ep = e;
            x->rule_idx = (uint32_t)r;
            x->l7 = model_protocol_is_l7(e->proto) && !e->tls_skip;
            x->rest_like = e->proto == MODEL_PROTO_REST || e->proto == MODEL_PROTO_WEBSOCKET ||
                           e->proto == MODEL_PROTO_GRAPHQL || e->proto == MODEL_PROTO_JSONRPC ||
                           e->proto == MODEL_PROTO_MCP;
            x->grant = (uint8_t)classify_grant(e, x->l7);
            peer = model_endpoint_peer_state(e);
            x->unresolved = peer == MODEL_PEER_UNRESOLVED;
            x->lo_only = peer == MODEL_PEER_LOOPBACK;
            if (e->nports <= IX_INLINE_PORTS) {
                x->nports = (uint8_t)e->nports;
                for (size_t k = 0; k < e->nports; k++) {
                    x->ports[k] = e->ports[k];
                }
            }
            x->host_kind = (uint8_t)model_ix_host_kind(e);
        }
    }
    ix->rule_bin[p->nrules] = nb;
    return index_share_bins(ix, nb);
}

static pv_result index_build_table(struct model_index *ix)
{
    PV_DEFER(struct ix_rec * recs, pv_free_p) = NULL;
    size_t nrec = 0;
    size_t ngroups = 0;
    size_t nhostless = 0;
    size_t nwild_any = 0;
    size_t cap;

    recs = pv_calloc(ix->neps > 0 ? ix->neps : 1, sizeof(*recs));
    PV_GUARD_PTR(recs);
    ix->hostless = pv_calloc(ix->neps > 0 ? ix->neps : 1, sizeof(*ix->hostless));
    PV_GUARD_PTR(ix->hostless);
    ix->wild_any = pv_calloc(ix->neps > 0 ? ix->neps : 1, sizeof(*ix->wild_any));
    PV_GUARD_PTR(ix->wild_any);
    for (size_t i = 0; i < ix->neps; i++) {
        const struct ix_ep *x = &ix->eps[i];
        struct ix_rec *rec = &recs[nrec];
        switch ((enum ix_host_kind)x->host_kind) {
        case IXH_NONE:
            break;
        case IXH_HOSTLESS:
            ix->hostless[nhostless++] = (uint32_t)i;
            break;
        case IXH_IP:
            rec->tag = IXT_IP;
            rec->key = (const char *)x->ep->host_ip.b;
            rec->klen = (uint32_t)sizeof(x->ep->host_ip.b);
            rec->ep = (uint32_t)i;
            nrec++;
            break;
        case IXH_EXACT:
            rec->tag = IXT_DNS;
            rec->key = x->ep->host.s;
            rec->klen = (uint32_t)strlen(x->ep->host.s);
            rec->ep = (uint32_t)i;
            nrec++;
            break;
        case IXH_WILD: {
            size_t off;
            size_t slen;
            wild_suffix(x->ep->host.s, strlen(x->ep->host.s), &off, &slen);
            if (slen == 0) {
                ix->wild_any[nwild_any++] = (uint32_t)i;
                break;
            }
            rec->tag = IXT_SUFFIX;
            rec->key = x->ep->host.s + off;
            rec->klen = (uint32_t)slen;
            ix->suffix_labels |= (uint64_t)1 << model_label_bit(rec->key, slen);
            rec->ep = (uint32_t)i;
            nrec++;
            break;
        }
        }
    }
    ix->nhostless = nhostless;
    ix->nwild_any = nwild_any;
    for (size_t i = 0; i < nrec; i++) {
        recs[i].h = fnv1a(recs[i].tag, recs[i].key, recs[i].klen);
    }
    if (nrec == 0) {
        return PV_RESULT_OK;
    }
    qsort(recs, nrec, sizeof(*recs), rec_cmp);
    for (size_t i = 0; i < nrec; i++) {
        if (i == 0 || !rec_same_key(&recs[i - 1], &recs[i])) {
            ngroups++;
        }
    }
    cap = 8;
    while (cap < 2 * ngroups) {
        cap *= 2;
    }
    ix->slots = pv_calloc(cap, sizeof(*ix->slots));
    PV_GUARD_PTR(ix->slots);
    ix->nslots = cap;
    ix->members = pv_calloc(nrec, sizeof(*ix->members));
    PV_GUARD_PTR(ix->members);
    for (size_t i = 0; i < nrec;) {
        size_t j = i;
        size_t pos;
        while (j < nrec && rec_same_key(&recs[i], &recs[j])) {
            ix->members[j] = recs[j].ep;
            j++;
        }
        pos = (size_t)recs[i].h & (cap - 1);
        while (ix->slots[pos].count != 0) {
            pos = (pos + 1) & (cap - 1);
        }
        ix->slots[pos].h = recs[i].h;
        ix->slots[pos].key = recs[i].key;
        ix->slots[pos].klen = recs[i].klen;
        ix->slots[pos].tag = recs[i].tag;
        ix->slots[pos].first = (uint32_t)i;
        ix->slots[pos].count = (uint32_t)(j - i);
        i = j;
    }
    return PV_RESULT_OK;
}

pv_result model_index_build(struct model_policy *p)
{
    PV_DEFER(struct model_index * ix, pv_free_p) = NULL;
    pv_result r;

    ix = pv_calloc(1, sizeof(*ix));
    PV_GUARD_PTR(ix);
    r = index_fill_eps(ix, p);
    if (pv_ok(r)) {
        r = index_build_table(ix);
    }
    if (!pv_ok(r)) {
        model_index_free(ix);
        ix = NULL;
        return r;
    }
    p->index = ix;
    PV_DISOWN(ix);
    return PV_RESULT_OK;
}
